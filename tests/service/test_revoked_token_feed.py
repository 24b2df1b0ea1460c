"""A token revoked while its feed is open (`shellexec token revoke` runs in another process)
ends that feed within a heartbeat interval, with `end_of_stream`, whether the session is quiet
or busy; reconnecting with the token then answers 401. Without it, the feed went on receiving
the session's events until the stream's lifetime ran out."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from shellexec.demo.rest import RestError
from shellexec.service import system_clock
from shellexec.service.tokens import Tokens
from shellexec.store import open_database

from support.acp import agent_text
from support.rest import unique
from support.stack import Stack

PUBLISHES = 200  # 20 s at one per 0.1 s: far longer than a heartbeat interval (0.5 s)


def _revoke(stack: Stack, name: str) -> None:
    database = open_database(stack.env["SHELLEXEC_DATABASE_URL"], readers=1)
    try:
        Tokens(database, system_clock).revoke(name)
    finally:
        database.close()


@pytest.fixture
def secured(stack_with: Callable[..., Stack]) -> Stack:
    return stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_HEARTBEAT_SECONDS="0.5")


@pytest.mark.parametrize("busy", [False, True])
def test_a_revoked_token_s_open_feed_ends(secured: Stack, busy: bool) -> None:
    admin = secured.api_as(secured.create_token(unique("admin"), "admin"))
    session = admin.create_session(unique("task"), "codex")["id"]
    name = unique("watcher")
    watcher = secured.api_as(secured.create_token(name, "read"))
    feed = watcher.watch(session)
    assert next(feed)["type"] == "heartbeat"
    _revoke(secured, name)
    stop = threading.Event()
    published: list[int] = []

    def keep_publishing() -> None:  # live events, closer together than the heartbeat
        for _ in range(PUBLISHES):
            if stop.wait(0.1):
                return
            admin.publish(session, agent_text("more"))
            published.append(1)

    publisher = threading.Thread(target=keep_publishing)
    if busy:
        publisher.start()
    try:
        events = [event["type"] for event in feed]
        published_meanwhile = len(published)
    finally:
        stop.set()
        if busy:
            publisher.join()
    assert events[-1] == "end_of_stream", events[-5:]
    # Ended by the revocation, not by the stream's lifetime (30 s) after every publish.
    assert published_meanwhile < PUBLISHES
    with pytest.raises(RestError) as refused:
        next(watcher.watch(session))
    assert refused.value.response is not None
    assert refused.value.response.status == 401

"""A caller holds at most MAX_WATCHERS_PER_CALLER open feeds per replica (ADR 0135), through
the real Envoy: the one past it is refused before it is opened, with RESOURCE_EXHAUSTED (429
over REST) and the reason TOO_MANY_WATCHERS; another token watches on meanwhile; and a place
comes back whatever ends a feed (its session's deletion, the client closing it, a refused
watch), however many times, so the caller can always open the full number again.

The in-process counting, and every other way a stream ends, are tests/feed/test_watcher_bound.py."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import grpc
import pytest

from shellexec.client import Feed, ShellExecClient, error_reason
from shellexec.rules.limits import MAX_WATCHERS_PER_CALLER
from shellexec.vocabulary import REASON_TOO_MANY_WATCHERS

from support.acp import agent_text
from support.metrics import scrape, value
from support.rest import Api, unique
from support.stack import Stack, free_port

GOOGLE_RPC = "type.googleapis.com/google.rpc."
# Long enough that the feeds' quiet replays cost little while 64 of them are open.
HEARTBEAT_SECONDS = "5"
# How long the server may take to hear that a client closed its feeds (it learns it from
# Envoy's stream reset, after the close returns).
RELEASE_DEADLINE_SECONDS = 30.0



@pytest.fixture
def secured(stack_with: Callable[..., Stack]) -> Stack:
    return stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_HEARTBEAT_SECONDS=HEARTBEAT_SECONDS,
                      SHELLEXEC_METRICS_PORT=str(free_port()))


@contextmanager
def front_door(stack: Stack, token: str) -> Iterator[ShellExecClient]:
    """A gRPC client of Envoy's port, sending `token`: one connection for all its feeds."""
    with ShellExecClient(f"127.0.0.1:{stack.rest_port}", token=token) as client:
        yield client


def opened(client: ShellExecClient, session_id: str) -> Feed:
    """A feed that has answered its opening heartbeat: the server holds it from then on."""
    feed = client.watch(session_id)
    assert next(feed).type == "heartbeat"
    return feed


def refusal(client: ShellExecClient, session_id: str) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        next(client.watch(session_id))
    return refused.value


def assert_too_many(error: grpc.RpcError) -> None:
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    assert error_reason(error) == REASON_TOO_MANY_WATCHERS


def open_full_share(client: ShellExecClient, session_id: str) -> list[Feed]:
    """The caller's full share of feeds, waiting (up to a deadline) for places that feeds it
    closed before still hold on the server."""
    feeds: list[Feed] = []
    deadline = time.monotonic() + RELEASE_DEADLINE_SECONDS
    while len(feeds) < MAX_WATCHERS_PER_CALLER:
        try:
            feeds.append(opened(client, session_id))
        except grpc.RpcError as error:
            assert_too_many(error)
            assert time.monotonic() < deadline, f"only {len(feeds)} places came back"
            time.sleep(0.05)
    return feeds


def close_all(feeds: list[Feed]) -> None:
    for feed in feeds:
        feed.close()


def test_the_watcher_past_the_bound_is_refused_and_another_caller_is_not(
        secured: Stack) -> None:
    first = secured.create_token(unique("dashboard"), "admin")
    second = secured.create_token(unique("reader"), "read")
    session_id = secured.api_as(first).new_session()["id"]
    other_session = secured.api_as(first).new_session()["id"]
    with front_door(secured, first) as client, ExitStack() as cleanup:
        feeds = [opened(client, session_id) for _ in range(MAX_WATCHERS_PER_CALLER)]
        cleanup.callback(close_all, feeds)

        # Over gRPC through Envoy, on this or any other session.
        assert_too_many(refusal(client, session_id))
        assert_too_many(refusal(client, other_session))
        # Over REST: 429 with the API's error body.
        answer = secured.api_as(first).request(
            "GET", f"/api/v1/task-sessions/{session_id}/messages:watch")
        assert answer.status == 429, answer.body
        body = answer.json()
        assert body["code"] == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        assert body["details"] == [{"@type": GOOGLE_RPC + "ErrorInfo",
                                    "reason": REASON_TOO_MANY_WATCHERS, "domain": "shellexec",
                                    "metadata": {}}]
        assert str(MAX_WATCHERS_PER_CALLER) in body["message"]

        # Counted before the refusal is answered, with no label (no token's name); the gauge
        # holds only the feeds that are open.
        samples = scrape(secured)
        assert value(samples, "shellexec_watchers_refused_total") == 3
        assert value(samples, "shellexec_watchers") == MAX_WATCHERS_PER_CALLER
        assert not [labels for name, labels in samples
                    if name.startswith("shellexec_watchers_refused") and labels]

        # The caller's unary calls go on over the same connection, and its open feeds too.
        publisher = secured.api_as(first)
        publisher.publish(session_id, agent_text("still served"))
        assert all(next(feed).type == "session.message.added" for feed in feeds)

        # Another token watches the same session, over REST and over gRPC.
        rest_feed = Api(secured.rest_url, token=second).watch(session_id)
        cleanup.callback(rest_feed.close)
        assert next(rest_feed)["type"] == "heartbeat"
        with front_door(secured, second) as other:
            grpc_feed = opened(other, session_id)
            grpc_feed.cancel()


def test_a_place_comes_back_however_a_feed_ends_and_however_often(secured: Stack) -> None:
    token = secured.create_token(unique("cycles"), "admin")
    api = secured.api_as(token)
    with front_door(secured, token) as client:
        for _ in range(3):
            # Ended by the session's deletion: each feed is read to its end, after which the
            # server has let it go.
            session_id = api.new_session()["id"]
            feeds = open_full_share(client, session_id)
            assert_too_many(refusal(client, session_id))
            api.call("DELETE", f"/api/v1/task-sessions/{session_id}")
            for feed in feeds:
                assert [event.type for event in feed][-1] == "session_deleted"

            # Watches the server refuses for another reason take no place.
            session_id = api.new_session()["id"]
            feeds = [opened(client, session_id) for _ in range(MAX_WATCHERS_PER_CALLER - 1)]
            for _ in range(5):
                assert refusal(client, "ses_" + "0" * 32).code() == grpc.StatusCode.NOT_FOUND
                ahead = api.request(
                    "GET", f"/api/v1/task-sessions/{session_id}/messages:watch?since_revision=9")
                assert ahead.status == 400, ahead.body
            feeds.append(opened(client, session_id))
            assert_too_many(refusal(client, session_id))

            # Closed by the client.
            close_all(feeds)
            feeds = open_full_share(client, session_id)
            assert_too_many(refusal(client, session_id))
            close_all(feeds)

"""A watcher whose hub was never told of a deletion (another replica deleted the session and
its notice was lost) hears `session_deleted` at its next replay, when the log is read again and
the session's row is gone, instead of heartbeats until its stream's lifetime ends.

On SQLite the row is deleted behind the server's back, as another writer would."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from support.acp import agent_text
from support.stack import Stack


@pytest.mark.sqlite_only
def test_a_replay_that_finds_the_session_gone_ends_the_stream(
        stack_with: Callable[..., Stack]) -> None:
    stack = stack_with(SHELLEXEC_HEARTBEAT_SECONDS="0.5")
    session_id = stack.api.new_session()["id"]
    stack.api.publish(session_id, agent_text("hello"))
    feed = stack.api.watch(session_id, "?since_revision=1")
    assert next(feed)["type"] == "heartbeat"

    database = Path(stack.env["SHELLEXEC_DATABASE_URL"].removeprefix("sqlite:///"))
    with sqlite3.connect(database, timeout=10) as connection:
        connection.execute("DELETE FROM session WHERE id = ?", (session_id,))
    connection.close()

    events = [event["type"] for event in feed]
    assert events[-1] == "session_deleted", events
    assert set(events[:-1]) <= {"heartbeat"}, events

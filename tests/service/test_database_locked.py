"""Another program holding the SQLite file's write lock (a `sqlite3` shell in a transaction, a
backup tool), through the front door: the server waited for it on its event loop, so every
call, health checks included, stopped for the busy timeout, twice; a write that never got the
lock is UNAVAILABLE (503), and stored nothing (ADR 0002)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.rest import Api
from support.stack import Stack, running_stack

pytestmark = pytest.mark.sqlite_only

SAY = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}}


@contextmanager
def _write_lock_held(stack: Stack) -> Iterator[sqlite3.Connection]:
    other = sqlite3.connect(stack.workdir / "shellexec.db", timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield other
    finally:
        other.close()


def test_calls_are_served_while_a_write_waits_for_the_lock(tmp_path: Path) -> None:
    with running_stack(tmp_path, SHELLEXEC_DB_BUSY_TIMEOUT_MS="120000") as stack:
        session_id = stack.api.new_session()["id"]
        answers: list[object] = []
        with _write_lock_held(stack) as other:
            publishing = threading.Thread(
                target=lambda: answers.append(Api(stack.rest_url).publish(session_id, SAY)))
            publishing.start()
            # Served while the publish waits: a read and a list.
            assert stack.api.session(session_id)["id"] == session_id
            assert stack.api.request("GET", "/api/v1/task-sessions?limit=1").status == 200
            assert answers == []
            assert publishing.is_alive()
            other.commit()
        publishing.join(timeout=60)
        assert [message["message"]["content"] for message in answers] == ["hello"]  # type: ignore[index]


def test_a_write_that_never_got_the_lock_is_unavailable(tmp_path: Path) -> None:
    with running_stack(tmp_path, SHELLEXEC_DB_BUSY_TIMEOUT_MS="50") as stack:
        session_id = stack.api.new_session()["id"]
        with _write_lock_held(stack):
            refused = stack.api.request("POST", f"/api/v1/task-sessions/{session_id}/updates",
                                        {"update": SAY})
        assert refused.status == 503, refused.body
        assert refused.json()["message"] == ("the database is locked by another program (a "
                                             "write waits up to 50 ms for it); retry shortly")
        assert stack.api.messages(session_id) == []  # nothing stored; a retry is safe
        assert stack.api.publish(session_id, SAY)["message"]["content"] == "hello"

"""A write whose caller is cancelled is stored all the same (a queued unit is never dropped),
so what follows its commit must happen all the same: before `units.write`'s `committed`, a
turn completed or a session deleted by a call cancelled meanwhile was never announced to the
live watchers, who saw it only once they resumed from the log."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.vocabulary import (
    EVENT_END_OF_STREAM,
    EVENT_SESSION_DELETED,
    EVENT_TURN_COMPLETED,
)

WAIT_SECONDS = 60


def _announced_though_cancelled(
        tmp_path: Path, write: Callable[[Composition, str, str], Awaitable[Any]]) -> str:
    """What a watcher of a session with a running turn is told first after `write` (given
    the session and the turn) is sent and cancelled at once: the type of its first event, or
    of the event its stream ends with."""
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'cancelled.db'}"))

    async def check() -> str:
        session = await app.sessions.create("cancelled-task", "codex")
        turn = await app.sessions.start_turn(session.id)
        watcher = app.feed.subscribe(session.id)
        call = asyncio.ensure_future(write(app, session.id, turn.id))
        await asyncio.sleep(0)  # its unit queued
        call.cancel()
        event = await watcher.next(WAIT_SECONDS)
        watcher.close()
        assert event is not None, "the write's event never came"
        told = watcher.final_type if event.type == EVENT_END_OF_STREAM else event.type
        return str(told)

    try:
        return asyncio.run(check())
    finally:
        app.database.close()


def test_a_turn_completed_by_a_cancelled_call_is_announced(tmp_path: Path) -> None:
    async def complete(app: Composition, session_id: str, turn_id: str) -> None:
        await app.sessions.complete_turn(session_id, turn_id, "end_turn")

    assert _announced_though_cancelled(tmp_path, complete) == EVENT_TURN_COMPLETED


def test_a_session_deleted_by_a_cancelled_call_ends_its_watchers(tmp_path: Path) -> None:
    async def delete(app: Composition, session_id: str, turn_id: str) -> None:
        await app.deletion.delete_session(session_id)

    assert _announced_though_cancelled(tmp_path, delete) == EVENT_SESSION_DELETED

"""Retention, in-process on a real SQLite file with a settable clock: sessions without
activity for the retention period are deleted in small batches, active ones are kept, and 0
keeps everything."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.service import NotFoundError
from shellexec.service.deletion import IdleDeleted
from shellexec.service.housekeeping import Housekeeping

from support.acp import agent_text
from support.clock import SettableClock

DAY = 24 * 60 * 60 * 1_000_000
START = 1_000_000_000_000_000


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock(START)


@pytest.fixture
def app(tmp_path: Path, clock: SettableClock) -> Iterator[Composition]:
    composed = compose(Settings(database_url=f"sqlite:///{tmp_path / 'retention.db'}",
                                retention_days=2), clock)
    yield composed
    composed.close()


def exists(app: Composition, session_id: str) -> bool:
    async def get() -> bool:
        try:
            await app.sessions.get(session_id)
        except NotFoundError:
            return False
        return True
    return asyncio.run(get())


def new_session(app: Composition, task_id: str) -> str:
    return str(asyncio.run(app.sessions.create(task_id, "codex")).id)


def test_sessions_idle_past_the_retention_are_deleted_and_active_ones_kept(
        app: Composition, clock: SettableClock) -> None:
    idle = new_session(app, "task-idle")
    quiet_turn = new_session(app, "task-busy")
    asyncio.run(app.sessions.start_turn(quiet_turn))
    clock.now += DAY
    # Publishing is activity, even within a turn that started long ago.
    asyncio.run(app.publisher.publish(quiet_turn, agent_text("still here"), None))
    clock.now += DAY + 1

    deleted = asyncio.run(app.housekeeping.sweep())

    assert deleted == 1
    assert not exists(app, idle)
    assert exists(app, quiet_turn)
    assert app.metrics.registry.get_sample_value(
        "shellexec_pruned_rows_total", {"table": "session"}) == 1
    # Its task had no other session, so it went too, and is counted (it was not).
    assert app.metrics.registry.get_sample_value(
        "shellexec_pruned_rows_total", {"table": "task"}) == 1


def test_a_sweep_deletes_in_batches_until_nothing_is_left(
        app: Composition, clock: SettableClock) -> None:
    sessions = [new_session(app, f"task-{index}") for index in range(5)]
    clock.now += 3 * DAY
    kept = new_session(app, "task-new")
    batches: list[int] = []
    delete_idle = app.deletion.delete_idle

    async def counted(cutoff: int, limit: int) -> IdleDeleted:
        batch = await delete_idle(cutoff, limit)
        batches.append(batch.sessions)
        return batch

    app.deletion.delete_idle = counted  # type: ignore[method-assign]
    housekeeping = Housekeeping(app.database, app.deletion, clock, retention_days=2,
                                feed_retention_hours=0, batch=2)

    assert asyncio.run(housekeeping.sweep()) == 5
    assert batches == [2, 2, 1]
    assert [exists(app, session_id) for session_id in sessions] == [False] * 5
    assert exists(app, kept)


def test_no_retention_keeps_everything(tmp_path: Path, clock: SettableClock) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'forever.db'}"), clock)
    try:
        session_id = new_session(app, "task-forever")
        clock.now += 10_000 * DAY
        assert asyncio.run(app.housekeeping.sweep()) == 0
        assert exists(app, session_id)
    finally:
        app.close()


def test_an_upgraded_session_counts_as_active_when_its_row_last_changed(
        tmp_path: Path, clock: SettableClock) -> None:
    path = tmp_path / "upgraded.db"
    app = compose(Settings(database_url=f"sqlite:///{path}", retention_days=2), clock)
    session_id = new_session(app, "task-upgraded")
    app.close()
    with sqlite3.connect(path) as db:  # as step 6 found a session of before it
        db.execute("UPDATE session SET updated_at = ?", (START - 5 * DAY,))
        db.execute("DELETE FROM schema_version WHERE version >= 6")
        db.execute("ALTER TABLE session DROP COLUMN active_at")
    db.close()

    reopened = compose(Settings(database_url=f"sqlite:///{path}", retention_days=2), clock)
    try:
        assert asyncio.run(reopened.housekeeping.sweep()) == 1
        assert not exists(reopened, session_id)
    finally:
        reopened.close()

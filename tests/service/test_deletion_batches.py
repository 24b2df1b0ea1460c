"""DeleteTask deletes a large task in units of a few sessions each: in one unit, a task of
2,000 sessions with ten 10 KiB commands each held the writer for 0.8 s, and every other
client's publish waited that long."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.rules.limits import HOUSEKEEPING_BATCH_SESSIONS
from shellexec.vocabulary import EVENT_END_OF_STREAM, EVENT_SESSION_DELETED

WAIT_SECONDS = 60


def test_a_task_s_sessions_go_in_units_of_a_batch_each(tmp_path: Path) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'batches.db'}"))
    sessions = 2 * HOUSEKEEPING_BATCH_SESSIONS + 3
    units: list[int] = []

    async def check() -> None:
        ids = [(await app.sessions.create("big-task", "codex")).id for _ in range(sessions)]
        other = await app.sessions.create("other-task", "codex")
        watchers = [app.feed.subscribe(session_id) for session_id in (ids[0], ids[-1])]
        app.database.on_commit_group(units.append)
        deleted = await app.deletion.delete_task("big-task")
        assert list(deleted) == ids  # oldest first, every one
        for watcher in watchers:
            event = await watcher.next(WAIT_SECONDS)
            assert event is not None
            assert event.type == EVENT_END_OF_STREAM
            assert watcher.final_type == EVENT_SESSION_DELETED
        assert (await app.sessions.get(other.id)).id == other.id

    try:
        asyncio.run(check())
    finally:
        app.database.close()
    # One unit per batch, each its own commit group: nothing else was writing.
    assert units == [1, 1, 1]


def test_a_task_deleted_while_its_caller_goes_away_is_deleted_whole(tmp_path: Path) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'left.db'}"))

    async def check() -> None:
        ids = [(await app.sessions.create("left-task", "codex")).id
               for _ in range(2 * HOUSEKEEPING_BATCH_SESSIONS)]
        last = app.feed.subscribe(ids[-1])
        call = asyncio.ensure_future(app.deletion.delete_task("left-task"))
        await asyncio.sleep(0)  # its first unit queued
        call.cancel()
        event = await last.next(WAIT_SECONDS)  # the second batch went all the same
        assert event is not None
        assert last.final_type == EVENT_SESSION_DELETED

    try:
        asyncio.run(check())
    finally:
        app.database.close()

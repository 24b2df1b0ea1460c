"""Pipelined durability on SQLite (ADR 0111), pinned with the write-ahead log's sync held:
the next group runs and commits while a sync is pending, no caller (writer or reader) hears
of a commit before a sync that began after it ended, a failing unit of the next group loses
nothing of the group before it, and close() leaves nothing committed unsynced.

The sync is the real fdatasync behind a gate the test opens (`Database`'s `sync_path`); the
units write real rows; a second connection reads the file as another process would."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellexec.store import Database
from shellexec.store.database import fdatasync_path, open_sqlite
from shellexec.store.models import Task

# How long a test waits for what should happen at once before it fails (never reached when
# the code is right).
FAILURE_SECONDS = 30


class GatedSync:
    """The log's sync, held while the gate is shut; `log` records what happened, in order."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.began = threading.Semaphore(0)
        self._open = threading.Event()
        self._open.set()

    def shut(self) -> None:
        self._open.clear()

    def open(self) -> None:
        self._open.set()

    def __call__(self, path: Path) -> None:
        if not path.name.endswith("-wal"):  # the log's directory, once
            fdatasync_path(path)
            return
        self.log.append("sync began")
        self.began.release()
        self._open.wait()
        fdatasync_path(path)
        self.log.append("sync ended")


@pytest.fixture
def gate() -> GatedSync:
    return GatedSync()


def _open(directory: Path, gate: GatedSync) -> Database:
    # One reader thread: reads then run in the order they are made.
    return open_sqlite(f"sqlite:///{directory / 'store.db'}", readers=1, sync_path=gate)


@pytest.fixture
def database(tmp_path: Path, gate: GatedSync) -> Iterator[Database]:
    opened = _open(tmp_path, gate)
    yield opened
    gate.open()  # a failed test may leave it shut; close() syncs through it
    opened.close()


def _committed(database: Database) -> list[str]:
    """The tasks in the file, as another connection sees them (committed, synced or not)."""
    with sqlite3.connect(database.path) as other:
        return [row[0] for row in other.execute("SELECT id FROM task ORDER BY id")]


def _insert(task_id: str, log: list[str] | None = None) -> Callable[[], str]:
    """A unit of work that stores the task `task_id` and returns it; on `log` it notes
    when it ran."""

    def work() -> str:
        Task.insert(id=task_id, created_at=0, updated_at=0).execute()
        if log is not None:
            log.append(f"{task_id} ran")
        return task_id

    return work


def _crash() -> None:
    Task.insert(id="never", created_at=0, updated_at=0).execute()
    raise RuntimeError("simulated failure inside a unit of work")


async def _committed_write(database: Database, work: Callable[[], Any]) -> asyncio.Task[Any]:
    """Starts the write of `work` and returns once its group's COMMIT has returned (the
    unit signals the loop; the leader commits before the loop runs that signal)."""
    loop = asyncio.get_running_loop()
    ran: asyncio.Future[None] = loop.create_future()

    def signalled() -> Any:
        value = work()
        loop.call_soon(ran.set_result, None)
        return value

    write = asyncio.ensure_future(database.write(signalled))
    # Bounded only so that a unit that never runs fails the test instead of hanging it.
    await asyncio.wait_for(ran, FAILURE_SECONDS)
    return write


async def _sync_began(gate: GatedSync) -> None:
    assert await asyncio.to_thread(gate.began.acquire, True, FAILURE_SECONDS), (
        "no sync began")


def test_next_group_commits_while_the_sync_is_pending_and_none_is_acknowledged_before_it(
        database: Database, gate: GatedSync) -> None:
    async def scenario() -> tuple[list[str], list[str], list[str]]:
        gate.shut()
        first = asyncio.ensure_future(database.write(_insert("n")))
        first.add_done_callback(lambda _: gate.log.append("n acknowledged"))
        await _sync_began(gate)
        second = await _committed_write(database, _insert("n+1", gate.log))
        second.add_done_callback(lambda _: gate.log.append("n+1 acknowledged"))
        while_held = _committed(database)
        unsettled = [name for name, write in (("n", first), ("n+1", second))
                     if not write.done()]
        gate.open()
        return [await first, await second], while_held, unsettled

    results, while_held, unsettled = asyncio.run(scenario())
    assert results == ["n", "n+1"]
    assert while_held == ["n", "n+1"], "the next group committed while the sync was held"
    assert unsettled == ["n", "n+1"], "nothing is acknowledged before its sync"
    log = gate.log
    assert log[:3] == ["sync began", "n+1 ran", "sync ended"]
    second_sync = log.index("sync began", 1)
    assert log.index("n acknowledged") > 2, "n is acknowledged after the sync of its commit"
    assert log.index("n+1 acknowledged") > log.index("sync ended", second_sync), (
        "n+1 committed during the first sync: only the second one covers it")


def test_a_failing_unit_of_the_next_group_loses_nothing_of_the_group_before(
        database: Database, gate: GatedSync) -> None:
    rollbacks: list[str] = []
    database.on_rollback(lambda: rollbacks.append("rolled back"))

    async def scenario() -> tuple[list[Any], list[str]]:
        gate.shut()
        first = asyncio.ensure_future(database.write(_insert("n")))
        await _sync_began(gate)
        # Made in one loop iteration: one group, which rolls back and runs each unit alone.
        crashing = asyncio.ensure_future(database.write(_crash))
        other = await _committed_write(database, _insert("c"))
        while_held = _committed(database)
        gate.open()
        return list(await asyncio.gather(first, crashing, other,
                                          return_exceptions=True)), while_held

    (first, crashed, other), while_held = asyncio.run(scenario())
    assert rollbacks, "the group with the failing unit rolled back"
    assert while_held == ["c", "n"], "the rollback kept the group before, and the re-run"
    assert first == "n"
    assert isinstance(crashed, RuntimeError)
    assert other == "c"
    assert asyncio.run(database.read(lambda: sorted(task.id for task in Task.select()))) == [
        "c", "n"]


def test_a_read_returns_only_once_what_it_saw_is_synced(
        database: Database, gate: GatedSync) -> None:
    ran_after = threading.Event()

    def after() -> None:
        ran_after.set()

    async def scenario() -> tuple[bool, list[str]]:
        gate.shut()
        write = asyncio.ensure_future(database.write(_insert("n")))
        await _sync_began(gate)
        reading = asyncio.ensure_future(database.read(
            lambda: [task.id for task in Task.select()]))
        # The one reader thread runs this read after the first, whose result the loop
        # therefore has before this test resumes.
        later = asyncio.ensure_future(database.read(after))
        await asyncio.to_thread(ran_after.wait)
        held = not reading.done()
        gate.open()
        seen = await reading
        gate.log.append("read returned")
        await asyncio.gather(write, later)
        return held, seen

    held, seen = asyncio.run(scenario())
    assert held, "a read that saw an unsynced commit waits for its sync"
    assert seen == ["n"]
    assert gate.log.index("sync ended") < gate.log.index("read returned")


def test_close_waits_for_the_sync_in_flight_and_syncs_what_was_committed_after_it(
        tmp_path: Path, gate: GatedSync) -> None:
    database = _open(tmp_path, gate)

    async def scenario() -> list[Any]:
        gate.shut()
        first = asyncio.ensure_future(database.write(_insert("n")))
        await _sync_began(gate)
        second = await _committed_write(database, _insert("n+1", gate.log))
        gate.open()
        database.close()  # on the loop's thread, before the loop hears the sync ended
        gate.log.append("closed")
        return list(await asyncio.gather(first, second))

    assert asyncio.run(scenario()) == ["n", "n+1"]
    assert gate.log == ["sync began", "n+1 ran", "sync ended", "sync began", "sync ended",
                        "closed"]

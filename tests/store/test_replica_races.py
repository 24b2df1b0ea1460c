"""Two replicas writing one PostgreSQL database at the same moment (READ COMMITTED): a unit of
work of another replica (tests/store/held_unit.py, a process of its own) is held open,
uncommitted, while this replica's unit runs into it; once this one is seen waiting for a
lock, the other commits. What the pair leaves must be what one order or the other would
have left (ADR 0062, since):

- a session created while a replica deletes its task's last session is kept, and so is its
  task, in either order (the task's deletion cascaded to it: an acknowledged session
  vanished);
- a session published to while retention picks it as idle is kept, and housekeeping
  (retention and feed compaction) does not wait for a session another replica is writing:
  it leaves it to the next sweep (waiting while holding other sessions' rows closed cycles
  with publishing groups, which PostgreSQL broke by aborting one after a second);
- a task's state is `running` while one of its sessions runs, whichever of a start and a
  completion on two replicas commits last.

On the run's PostgreSQL server."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.store import queries
from shellexec.store.models import Session
from shellexec.vocabulary import SESSION_IDLE, TASK_RUNNING

from support.acp import agent_text
from support.clock import SettableClock

T = TypeVar("T")

HELD_UNIT = Path(__file__).with_name("held_unit.py")
# Bounds each wait on the other replica; a working pair is done in well under a second.
WAIT_SECONDS = 30.0
HOUR = 60 * 60 * 1_000_000
START = 1_000_000_000_000_000


@pytest.fixture
def app(postgres_url: str) -> Iterator[Composition]:
    composed = compose(Settings(database_url=postgres_url))
    yield composed
    composed.close()


def _waits_for_a_lock(watcher: psycopg.Connection[tuple[object, ...]]) -> bool:
    found = watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                            "current_database() AND wait_event_type = 'Lock'").fetchone()
    return bool(found and found[0])


@contextlib.contextmanager
def held_unit(url: str, other: list[str]) -> Iterator[Callable[[], None]]:
    """The other replica's unit (`held_unit.py` arguments), written and held open; what this
    yields lets it commit, and sees that it did."""
    with subprocess.Popen([sys.executable, str(HELD_UNIT), url, *other], text=True,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as held:
        stdin, stdout = held.stdin, held.stdout
        assert stdin is not None
        assert stdout is not None

        def commit() -> None:
            stdin.write("commit\n")
            stdin.flush()
            assert stdout.readline() == "committed\n"

        try:
            assert stdout.readline() == "held\n"
            yield commit
        finally:
            held.kill()


def interleaved(url: str, other: list[str], mine: Callable[[], Awaitable[T]]) -> T:
    """Holds the other replica's unit open, runs `mine` into it, and lets the other commit
    once `mine` waits for a lock; returns what `mine` returns."""
    with held_unit(url, other) as commit:

        async def run() -> T:
            # One connection, opened before `mine` starts: a new one for every look took
            # long enough on a loaded machine that `mine` could wait out its lock timeout
            # (5 s) unseen. Autocommit: each look reads the activity afresh.
            with psycopg.connect(url, autocommit=True) as watcher:
                call = asyncio.ensure_future(mine())
                deadline = time.monotonic() + WAIT_SECONDS
                while not await asyncio.to_thread(_waits_for_a_lock, watcher):
                    if call.done():
                        call.result()  # raises what ended it, if anything did
                        pytest.fail("this replica did not wait for the other")
                    assert time.monotonic() < deadline, "this replica never waited"
                    await asyncio.sleep(0.01)
            await asyncio.to_thread(commit)
            return await call

        return asyncio.run(run())


def while_held(url: str, other: list[str], mine: Callable[[], Awaitable[T]]) -> T:
    """Holds the other replica's unit open while `mine` runs to its end, then lets the other
    commit; returns what `mine` returns. `mine` must not wait for the other: if it did, it
    would wait out the lock timeout and fail."""
    with held_unit(url, other) as commit:
        value = asyncio.run(asyncio.wait_for(mine(), WAIT_SECONDS))
        commit()
        return value


def _session(app: Composition, session_id: str) -> Session | None:
    return asyncio.run(app.database.read(lambda: queries.get_session(session_id)))


def test_a_session_created_while_its_task_s_last_one_is_deleted_is_kept(
        postgres_url: str, app: Composition) -> None:
    doomed = asyncio.run(app.sessions.create("task-raced", "codex")).id
    created = "ses_" + "c" * 32
    interleaved(postgres_url, ["create", "task-raced", created],
                lambda: app.deletion.delete_session(doomed))
    assert _session(app, doomed) is None
    assert _session(app, created) is not None, "the new session went with its task"
    assert asyncio.run(app.database.read(
        lambda: queries.session_ids_of_task("task-raced"))) == [created]


def test_a_session_created_while_another_replica_deletes_the_task_s_last_one_is_kept(
        postgres_url: str, app: Composition) -> None:
    """The other order: the deletion first, the creation waiting for it."""
    doomed = asyncio.run(app.sessions.create("task-raced-too", "codex")).id
    created = interleaved(postgres_url, ["delete", doomed, "task-raced-too"],
                          lambda: app.sessions.create("task-raced-too", "codex"))
    assert _session(app, doomed) is None
    assert _session(app, created.id) is not None
    assert asyncio.run(app.database.read(
        lambda: queries.session_ids_of_task("task-raced-too"))) == [created.id]


def test_a_session_published_to_while_retention_picks_it_is_kept(
        postgres_url: str, app: Composition) -> None:
    session_id = asyncio.run(app.sessions.create("task-retained", "codex")).id
    created = _session(app, session_id)
    assert created is not None
    cutoff = int(created.active_at) + 1  # idle as retention first reads it
    deleted = while_held(postgres_url, ["publish", session_id, str(cutoff + 1_000_000)],
                         lambda: app.deletion.delete_idle(cutoff, 50))
    assert deleted.sessions == 0
    assert _session(app, session_id) is not None, "an acknowledged publish was deleted"


def test_compaction_leaves_a_session_another_replica_is_writing_to_the_next_sweep(
        postgres_url: str) -> None:
    clock = SettableClock(START)
    app = compose(Settings(database_url=postgres_url), clock)  # a 24 h feed window
    try:
        session_id = asyncio.run(app.sessions.create("task-compacted", "codex")).id
        asyncio.run(app.publisher.publish(session_id, agent_text("done"), 1))
        clock.now += 25 * HOUR
        # The other replica writes the session's row (with its old activity time, so that
        # the session stays quiet) while this one sweeps.
        while_held(postgres_url, ["publish", session_id, str(START)],
                   app.housekeeping.sweep)
        assert _compaction_point(app, session_id) == (0, 1)
        asyncio.run(app.housekeeping.sweep())
        assert _compaction_point(app, session_id) == (1, 1)
    finally:
        app.close()


def _compaction_point(app: Composition, session_id: str) -> tuple[int, int] | None:
    return asyncio.run(app.database.read(lambda: queries.compaction_point(session_id)))


def test_a_task_runs_while_a_session_runs_whichever_change_commits_last(
        postgres_url: str, app: Composition) -> None:
    starting = asyncio.run(app.sessions.create("task-stated", "codex")).id
    ending = asyncio.run(app.sessions.create("task-stated", "codex")).id
    asyncio.run(app.sessions.start_turn(ending))

    def complete() -> None:  # the other session's turn ends on this replica
        session = queries.get_session(ending)
        assert session is not None
        app.database.statements.set_session_state(session, SESSION_IDLE, 3)

    interleaved(postgres_url, ["start", starting], lambda: app.database.write(complete))
    assert asyncio.run(app.database.read(
        lambda: queries.task_state("task-stated"))) == TASK_RUNNING

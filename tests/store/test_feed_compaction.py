"""Feed compaction, in-process on a real SQLite file with a settable clock: events older than
the feed window are pruned and the compaction point follows, a watcher resuming from before
it gets `reset`, revisions keep increasing, and publish receipts go after their window (those
of updates that changed no message with the older message receipts above them). A session
deleted and replaced between the sweep's read and its write never costs the new session its
events, though the new one may take the deleted one's number."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.feed import FeedEvent
from shellexec.service.housekeeping import Housekeeping
from shellexec.store import Database

from support.acp import agent_text, codex_start
from support.clock import SettableClock

HOUR = 60 * 60 * 1_000_000
START = 1_000_000_000_000_000
T = TypeVar("T")


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock(START)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "compaction.db"


@pytest.fixture
def app(path: Path, clock: SettableClock) -> Iterator[Composition]:
    composed = compose(Settings(database_url=f"sqlite:///{path}"), clock)  # 24 h feed window
    yield composed
    composed.close()


def first_events(app: Composition, session_id: str, since: int, count: int) -> list[FeedEvent]:
    async def watch() -> list[FeedEvent]:
        stream = await app.reader.watch(session_id, since)
        found: list[FeedEvent] = []
        async for event in stream:
            found.append(event)
            if len(found) == count:
                break
        await stream.aclose()
        return found
    return asyncio.run(watch())


def stored(path: Path, session_id: str) -> dict[str, Any]:
    with sqlite3.connect(path) as db:
        number, revision, compacted = db.execute(
            "SELECT number, revision, compacted_revision FROM session WHERE id = ?",
            (session_id,)).fetchone()
        events = [row[0] for row in db.execute(
            "SELECT revision FROM event WHERE session_number = ? ORDER BY revision", (number,))]
        receipts = [row[0] for row in db.execute(
            "SELECT sequence FROM publish_receipt WHERE session_number = ? ORDER BY sequence",
            (number,))]
    db.close()
    return {"revision": revision, "compacted": compacted, "events": events,
            "receipts": receipts}


def pruned(app: Composition, table: str) -> float | None:
    """What the metrics say was pruned from `table` so far."""
    return app.metrics.registry.get_sample_value("shellexec_pruned_rows_total",
                                                 {"table": table})


def publish(app: Composition, session_id: str, update: dict[str, Any],
            sequence: int | None = None) -> bool:
    return bool(asyncio.run(app.publisher.publish(session_id, update, sequence)).duplicate)


def test_a_quiet_session_loses_its_events_and_a_late_watcher_gets_reset(
        app: Composition, clock: SettableClock, path: Path) -> None:
    session_id = str(asyncio.run(app.sessions.create("task-quiet", "codex")).id)
    publish(app, session_id, codex_start("a", "make"), 1)
    publish(app, session_id, agent_text("done"), 2)
    clock.now += 25 * HOUR

    asyncio.run(app.housekeeping.sweep())

    assert stored(path, session_id) == {"revision": 2, "compacted": 2, "events": [],
                                        "receipts": []}
    heartbeat, reset = first_events(app, session_id, 0, 2)
    assert (heartbeat.type, heartbeat.revision) == ("heartbeat", 0)
    assert (reset.type, reset.revision, reset.message) == ("reset", 2, None)
    # A watcher that is up to date replays nothing and stays.
    assert [event.type for event in first_events(app, session_id, 2, 1)] == ["heartbeat"]
    # Revisions go on from the session's row.
    publish(app, session_id, agent_text(" and more"), 3)
    assert stored(path, session_id)["events"] == [3]
    assert [(e.type, e.revision) for e in first_events(app, session_id, 2, 2)][1] == (
        "session.message.updated", 3)


def test_a_quiet_session_loses_its_turns_events_too(
        app: Composition, clock: SettableClock, path: Path) -> None:
    """Only events older than a message's last change were found: a session whose turns
    carried no message, or whose last turn ended after its last message, kept those
    events whatever its quiet."""
    bare = str(asyncio.run(app.sessions.create("task-bare", "codex")).id)
    turn = asyncio.run(app.sessions.start_turn(bare))
    asyncio.run(app.sessions.complete_turn(bare, turn.id, "end_turn"))
    busy = str(asyncio.run(app.sessions.create("task-busy", "codex")).id)
    turn = asyncio.run(app.sessions.start_turn(busy))
    publish(app, busy, codex_start("c", "make"))
    asyncio.run(app.sessions.complete_turn(busy, turn.id, "end_turn"))
    clock.now += 25 * HOUR

    asyncio.run(app.housekeeping.sweep())

    assert stored(path, bare) == {"revision": 2, "compacted": 2, "events": [], "receipts": []}
    # Its turn started, its command came and was cancelled by the turn's end, which came
    # last: four events, every one pruned.
    assert stored(path, busy) == {"revision": 4, "compacted": 4, "events": [], "receipts": []}
    assert [event.type for event in first_events(app, bare, 0, 2)] == ["heartbeat", "reset"]


def test_an_active_session_keeps_the_events_of_the_window(
        app: Composition, clock: SettableClock, path: Path) -> None:
    session_id = str(asyncio.run(app.sessions.create("task-active", "codex")).id)
    publish(app, session_id, codex_start("old", "make"), 1)  # revision 1
    publish(app, session_id, agent_text("earlier"), 2)  # revision 2
    clock.now += 25 * HOUR
    publish(app, session_id, codex_start("new", "ls"), 3)  # revision 3, inside the window

    asyncio.run(app.housekeeping.sweep())

    assert stored(path, session_id) == {"revision": 3, "compacted": 2, "events": [3],
                                        "receipts": [3]}
    assert (pruned(app, "event"), pruned(app, "publish_receipt")) == (2, 2)
    asyncio.run(app.housekeeping.sweep())  # nothing more to prune: nothing more counted
    assert (pruned(app, "event"), pruned(app, "publish_receipt")) == (2, 2)
    assert [event.type for event in first_events(app, session_id, 1, 2)] == [
        "heartbeat", "reset"]
    replayed = first_events(app, session_id, 2, 2)[1]
    assert (replayed.type, replayed.revision) == ("session.message.added", 3)


def test_receipts_answer_retries_through_their_window_then_go(
        app: Composition, clock: SettableClock, path: Path) -> None:
    session_id = str(asyncio.run(app.sessions.create("task-receipts", "codex")).id)
    publish(app, session_id, agent_text("once"), 1)
    clock.now += 23 * HOUR
    asyncio.run(app.housekeeping.sweep())
    assert publish(app, session_id, agent_text("once"), 1), "a retry within 24 h is a duplicate"
    assert stored(path, session_id)["receipts"] == [1]

    clock.now += 2 * HOUR
    asyncio.run(app.housekeeping.sweep())
    assert stored(path, session_id)["receipts"] == []


def test_no_feed_window_keeps_every_event(tmp_path: Path, clock: SettableClock) -> None:
    path = tmp_path / "forever.db"
    app = compose(Settings(database_url=f"sqlite:///{path}", feed_retention_hours=0), clock)
    try:
        session_id = str(asyncio.run(app.sessions.create("task-forever", "codex")).id)
        publish(app, session_id, agent_text("kept"), 1)
        clock.now += 10_000 * HOUR
        asyncio.run(app.housekeeping.sweep())
        assert stored(path, session_id) == {"revision": 1, "compacted": 0, "events": [1],
                                            "receipts": [1]}
    finally:
        app.close()


def test_a_feed_window_shorter_than_the_receipts_is_refused() -> None:
    with pytest.raises(ValueError, match="SHELLEXEC_FEED_RETENTION_HOURS"):
        Settings.from_env({"SHELLEXEC_FEED_RETENTION_HOURS": "2"})


def new_session(app: Composition, task_id: str) -> str:
    return str(asyncio.run(app.sessions.create(task_id, "codex")).id)


class _BetweenReadAndWrite:
    """The app's database, running `meanwhile` once after the first read returns: what
    other callers may commit while the sweep waits for its write."""

    def __init__(self, database: Database, meanwhile: Callable[[], Any]) -> None:
        self._database = database
        self._meanwhile: Callable[[], Any] | None = meanwhile

    @property
    def statements(self) -> Any:
        return self._database.statements

    async def read(self, work: Callable[[], T]) -> T:
        found = await self._database.read(work)
        if self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            await meanwhile()
        return found

    async def write(self, unit: Callable[[], T], session: str | None = None,
                    settled: Callable[[asyncio.Future[T]], None] | None = None) -> T:
        return await self._database.write(unit, session, settled)


def test_compaction_never_prunes_the_events_of_a_session_that_took_a_deleted_ones_number(
        app: Composition, clock: SettableClock, path: Path) -> None:
    old = new_session(app, "task-review-old")
    publish(app, old, codex_start("a", "make"))
    publish(app, old, agent_text("done"))  # revision 2, both older than the window soon
    clock.now += 25 * HOUR
    replacement: list[str] = []

    async def delete_and_replace() -> None:
        await app.deletion.delete_session(old)
        session = await app.sessions.create("task-review-new", "codex")
        replacement.append(str(session.id))
        await app.publisher.publish(session.id, codex_start("b", "ls"), None)
        await app.publisher.publish(session.id, agent_text("fresh"), None)

    sweep = Housekeeping(_BetweenReadAndWrite(app.database, delete_and_replace),  # type: ignore[arg-type]
                         app.deletion, clock, retention_days=0, feed_retention_hours=24)
    asyncio.run(sweep.sweep())

    (new,) = replacement
    # The new session's two events are new, inside the window: none of them may be pruned.
    assert stored(path, new) == {"revision": 2, "compacted": 0, "events": [1, 2],
                                 "receipts": []}


def test_receipts_of_updates_that_changed_no_message_go_after_their_window(
        app: Composition, clock: SettableClock, path: Path) -> None:
    session_id = new_session(app, "task-review-receipts")
    thought = {"sessionUpdate": "agent_thought_chunk",
               "content": {"type": "text", "text": "thinking"}}
    publish(app, session_id, thought, 1)  # changes no message: a receipt without a position
    publish(app, session_id, codex_start("a", "make"), 2)
    clock.now += 25 * HOUR
    publish(app, session_id, agent_text("still busy"), 3)  # the session stays active

    asyncio.run(app.housekeeping.sweep())

    # Receipt 2's message is unchanged for 25 h and goes; receipt 1 is as old and must too.
    assert stored(path, session_id)["receipts"] == [3]

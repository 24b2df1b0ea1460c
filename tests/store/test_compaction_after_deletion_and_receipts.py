"""Feed compaction and publish receipts, in-process on a real SQLite file with a settable
clock.

1. Session numbers are handed out as MAX(number) + 1, so deleting the newest session gives its
   number to the next one. Compaction finds its sessions on a reader and prunes in a later
   write; that write reads the number from the session's id, so a session deleted and
   replaced in between never costs the new session its events.
2. A receipt of an update that changed no message (a thought chunk, a plan, a held terminal
   update) goes with the older message receipts above it in sequence order, even while its
   session stays active.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
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
    return tmp_path / "review.db"


@pytest.fixture
def app(path: Path, clock: SettableClock) -> Iterator[Composition]:
    composed = compose(Settings(database_url=f"sqlite:///{path}"), clock)  # 24 h feed window
    yield composed
    composed.close()


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
    return {"number": number, "revision": revision, "compacted": compacted,
            "events": events, "receipts": receipts}


def new_session(app: Composition, task_id: str) -> str:
    return str(asyncio.run(app.sessions.create(task_id, "codex")).id)


def publish(app: Composition, session_id: str, update: dict[str, Any],
            sequence: int | None = None) -> None:
    asyncio.run(app.publisher.publish(session_id, update, sequence))


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

    async def write(self, unit: Callable[[], T], session: str | None = None) -> T:
        return await self._database.write(unit, session)


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
    assert stored(path, new) == {"number": 1, "revision": 2, "compacted": 0,
                                 "events": [1, 2], "receipts": []}


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

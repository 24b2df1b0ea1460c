"""Use cases that delete: a session, a task with its sessions, and sessions idle too long.

A deletion is one unit of work that removes every row stored for its sessions (see
`Statements.delete_session`); a task's sessions go in units of at most
HOUSEKEEPING_BATCH_SESSIONS, so that other writes wait for one short unit at most. Once a
unit has committed, its sessions' watchers receive `session_deleted` and their streams end.
What units of work remember (fold states, session facts, revisions) is forgotten in the same
unit, so nothing written later can reach a deleted session through a cache (ADR 0062).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from shellexec.feed import FeedHub
from shellexec.rules.limits import HOUSEKEEPING_BATCH_SESSIONS
from shellexec.service import units
from shellexec.service.access import UNRESTRICTED, Caller
from shellexec.service.deps import Clock
from shellexec.service.errors import NotFoundError
from shellexec.service.sessions import require_session
from shellexec.service.unit_caches import UnitCaches
from shellexec.store import Database, queries
from shellexec.vocabulary import EVENT_SESSION_DELETED, RESOURCE_TASK

# (session id, task id) of a session to delete.
Doomed = tuple[str, str]


@dataclass(frozen=True, slots=True)
class IdleDeleted:
    """What one batch of retention deleted: how many sessions, and their rows by table."""

    sessions: int
    rows: Counter[str] = field(default_factory=Counter)


class Deletion:
    """Deletes sessions and tasks, and ends their watchers' streams."""

    def __init__(self, database: Database, feed: FeedHub, caches: UnitCaches,
                 clock: Clock, batch: int = HOUSEKEEPING_BATCH_SESSIONS) -> None:
        self._database = database
        self._feed = feed
        self._caches = caches
        self._clock = clock
        self._batch = batch

    async def delete_session(self, session_id: str, *, caller: Caller = UNRESTRICTED) -> str:
        def work() -> list[Doomed]:
            session = require_session(session_id, caller)
            return self._delete([(session_id, str(session.task_id))])

        await units.write(self._database, work, session_id, committed=self._announce)
        return session_id

    async def delete_task(self, task_id: str, *,
                          caller: Caller = UNRESTRICTED) -> tuple[str, ...]:
        """Deletes the task's sessions and the task; returns the deleted sessions' ids.

        The sessions the task has when the first unit runs go in units of at most `batch`, to
        the end even if the caller goes away meanwhile (a task half deleted because its caller
        left would answer its retry with fewer ids)."""
        return await asyncio.shield(self._delete_task(task_id, caller))

    async def _delete_task(self, task_id: str, caller: Caller) -> tuple[str, ...]:
        ids: list[str] = []

        def first() -> list[Doomed]:
            ids[:] = queries.session_ids_of_task(task_id) if caller.sees(task_id) else []
            return self._delete([(session_id, task_id) for session_id in ids[:self._batch]])

        deleted = await units.write(self._database, first, committed=self._announce)
        for start in range(self._batch, len(ids), self._batch):
            batch = [(session_id, task_id) for session_id in ids[start:start + self._batch]]
            more: list[Doomed] = await units.write(
                self._database, partial(self._delete, batch), committed=self._announce)
            deleted += more
        if not deleted:  # a task exists while it has a session
            raise NotFoundError("task", task_id, RESOURCE_TASK)
        return tuple(session_id for session_id, _ in deleted)

    async def delete_idle(self, cutoff: int, limit: int) -> IdleDeleted:
        """Deletes up to `limit` sessions unchanged since before `cutoff` (microseconds)."""
        rows: Counter[str] = Counter()

        def work() -> list[Doomed]:
            rows.clear()  # a unit of work may run twice (database.py): count the last run
            picked = queries.sessions_idle_since(cutoff, limit)
            ids = [session_id for session_id, _ in picked]
            # Another replica may have published to one since it was picked: only those still
            # idle once locked go (a publish acknowledged a moment before must not be lost),
            # and one another transaction holds now is not idle (nor waited for).
            locked = self._database.statements.lock_free_sessions(ids)
            idle = queries.idle_among(locked, cutoff)
            return self._delete_locked([doomed for doomed in picked if doomed[0] in idle], rows)

        deleted = await units.write(self._database, work, committed=self._announce)
        return IdleDeleted(len(deleted), rows)

    def _delete(self, doomed: list[Doomed]) -> list[Doomed]:
        # Where other replicas write, their rows are locked first (in id order); the unit of
        # a single session was locked before it ran. Those another replica deleted meanwhile
        # are gone once locked: deleting them again would tell a second caller it deleted
        # them, and their watchers twice.
        statements = self._database.statements
        statements.lock_sessions([session_id for session_id, _ in doomed])
        return self._delete_locked([each for each in doomed if statements.holds(each[0])])

    def _delete_locked(self, doomed: list[Doomed],
                       rows: Counter[str] | None = None) -> list[Doomed]:
        now = self._clock()
        for session_id, task_id in doomed:
            deleted = self._database.statements.delete_session(session_id, task_id, now)
            if rows is not None:
                rows.update(deleted)
        if doomed:
            self._caches.forget()
        return doomed

    def _announce(self, deleted: Sequence[Doomed] | None) -> None:
        """Ends the deleted sessions' watchers, once the deletion committed (even if its
        caller went away meanwhile)."""
        for session_id, _ in deleted or ():
            self._feed.finish(session_id, EVENT_SESSION_DELETED)

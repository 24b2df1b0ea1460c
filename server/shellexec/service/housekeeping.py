"""The periodic sweep that keeps the database from growing without bound (ADR 0062).

Retention deletes sessions without activity for `retention_days`. Feed compaction prunes the
events older than the feed window and makes each session's compaction point follow (a
watcher resuming from before it gets `reset`); publish receipts older than their window go
in the same transactions. The sweep works in transactions of at most
HOUSEKEEPING_BATCH_SESSIONS sessions and yields to the event loop between them: a publish
waits for one short transaction at most, never for the whole sweep.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import Counter
from collections.abc import Callable

from shellexec.rules.limits import HOUSEKEEPING_BATCH_SESSIONS, RECEIPT_WINDOW_SECONDS
from shellexec.service import units
from shellexec.service.deletion import Deletion
from shellexec.service.deps import Clock
from shellexec.store import Database, queries
from shellexec.store.models import Event, PublishReceipt

_MICROS_PER_HOUR = 60 * 60 * 1_000_000
_RECEIPT_WINDOW = RECEIPT_WINDOW_SECONDS * 1_000_000

_log = logging.getLogger(__name__)

# Told, after each transaction of a sweep, how many rows it deleted from a table.
PrunedListener = Callable[[str, int], None]


def _uncounted(table: str, rows: int) -> None:
    return None


class Housekeeping:
    """Deletes what is kept no longer; `run` repeats `sweep` until cancelled."""

    def __init__(self, database: Database, deletion: Deletion, clock: Clock, *,
                 retention_days: float, feed_retention_hours: float,
                 batch: int = HOUSEKEEPING_BATCH_SESSIONS,
                 on_pruned: PrunedListener = _uncounted) -> None:
        self._database = database
        self._deletion = deletion
        self._clock = clock
        self._retention = int(retention_days * 24 * _MICROS_PER_HOUR)
        self._feed_window = int(feed_retention_hours * _MICROS_PER_HOUR)
        self._batch = batch
        self._on_pruned = on_pruned

    async def sweep(self) -> int:
        """One pass; returns how many sessions retention deleted."""
        deleted = await self._delete_idle()
        await self._compact()
        return deleted

    async def _delete_idle(self) -> int:
        if self._retention <= 0:
            return 0
        cutoff = self._clock() - self._retention
        deleted = 0
        while True:
            batch = await self._deletion.delete_idle(cutoff, self._batch)
            self._report(batch.rows)
            deleted += batch.sessions
            if batch.sessions < self._batch:
                return deleted
            await asyncio.sleep(0)  # let the writes that queued meanwhile commit first

    async def _compact(self) -> None:
        if self._feed_window <= 0:
            return
        now = self._clock()
        feed_cutoff, receipt_cutoff = now - self._feed_window, now - _RECEIPT_WINDOW
        after = ""
        while True:
            # Found on a reader: an event older than the cutoff stays older, so the points
            # hold when the write runs.
            found = await self._database.read(functools.partial(
                queries.compactable_sessions, feed_cutoff, after, self._batch))
            if not found:
                return

            def work(found: list[queries.Compactable] = found) -> Counter[str]:
                statements = self._database.statements
                rows: Counter[str] = Counter()
                # A session another replica is writing now is compacted at the next sweep.
                free = statements.lock_free_sessions([session_id for session_id, *_ in found])
                for session_id, compacted, prunable in found:
                    if session_id not in free:
                        continue
                    if prunable > compacted:
                        rows[Event._meta.table_name] += statements.prune_events(
                            session_id, prunable)
                    rows[PublishReceipt._meta.table_name] += statements.prune_receipts(
                        session_id, receipt_cutoff)
                return rows

            self._report(await units.write(self._database, work))
            if len(found) < self._batch:
                return
            after = found[-1][0]
            await asyncio.sleep(0)

    def _report(self, rows: Counter[str]) -> None:
        for table, count in rows.items():
            if count:
                self._on_pruned(table, count)

    async def run(self, interval_seconds: float) -> None:
        """Sweeps every `interval_seconds` until cancelled; a failed sweep is retried at the
        next interval (the service keeps serving)."""
        while True:
            try:
                await self.sweep()
            except Exception:  # the next sweep tries again
                _log.exception("housekeeping sweep failed")
            await asyncio.sleep(interval_seconds)

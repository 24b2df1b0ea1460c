"""The periodic sweep that keeps the database from growing without bound (ADR 0062).

Retention deletes sessions without activity for `retention_days`. The sweep works in
transactions of at most HOUSEKEEPING_BATCH_SESSIONS sessions and yields to the event loop
between them: a publish waits for one short transaction at most, never for the whole sweep.
"""

from __future__ import annotations

import asyncio
import logging

from shellexec.rules.limits import HOUSEKEEPING_BATCH_SESSIONS
from shellexec.service.deletion import Deletion
from shellexec.service.deps import Clock

_MICROS_PER_DAY = 24 * 60 * 60 * 1_000_000

_log = logging.getLogger(__name__)


class Housekeeping:
    """Deletes what is kept no longer; `run` repeats `sweep` until cancelled."""

    def __init__(self, deletion: Deletion, clock: Clock, *, retention_days: float,
                 batch: int = HOUSEKEEPING_BATCH_SESSIONS) -> None:
        self._deletion = deletion
        self._clock = clock
        self._retention = int(retention_days * _MICROS_PER_DAY)
        self._batch = batch

    async def sweep(self) -> int:
        """One pass; returns how many sessions retention deleted."""
        if self._retention <= 0:
            return 0
        cutoff = self._clock() - self._retention
        deleted = 0
        while True:
            count = await self._deletion.delete_idle(cutoff, self._batch)
            deleted += count
            if count < self._batch:
                return deleted
            await asyncio.sleep(0)  # let the writes that queued meanwhile commit first

    async def run(self, interval_seconds: float) -> None:
        """Sweeps every `interval_seconds` until cancelled; a failed sweep is retried at the
        next interval (the service keeps serving)."""
        while True:
            try:
                await self.sweep()
            except Exception:  # the next sweep tries again
                _log.exception("housekeeping sweep failed")
            await asyncio.sleep(interval_seconds)

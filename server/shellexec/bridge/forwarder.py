"""The ordered, sequenced, bounded buffer between the agent and PublishUpdate.

`enqueue` is synchronous: the stream observer calls it for every `session/update` in the order
the agent wrote them, and it numbers each update (1, 2, 3 ... per service session) on the spot.
One task drains the buffer head first, publishing one update at a time and retrying each with
its own sequence number until the service has it, so arrival order is publish order and a
retry after a lost answer is deduplicated by the service instead of applied twice.

While the service is away the buffer grows; past `BufferLimits` (a count and a byte size) the
forwarder fails with `BufferFullError` rather than eat the machine's memory. See docs/adr/0030
and docs/adr/0031.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from shellexec.bridge.errors import BridgeError, BufferFullError, ServiceRejectedError

log = logging.getLogger("shellexec.bridge")

Update = Mapping[str, Any]
Publish = Callable[[int, Update], Awaitable[bool]]

DEFAULT_MAX_UPDATES = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BufferLimits:
    """At most `max_updates` updates and `max_bytes` bytes of compact JSON may wait."""

    max_updates: int = DEFAULT_MAX_UPDATES
    max_bytes: int = DEFAULT_MAX_BYTES


@dataclass(frozen=True, slots=True)
class _Pending:
    sequence: int
    update: Update
    size: int


@dataclass(slots=True)
class ForwardStats:
    """What the drain did: published (new), duplicates (already stored), rejected (skipped)."""

    published: int = 0
    duplicates: int = 0
    rejected: int = 0


class Forwarder:
    """Buffers updates in arrival order and publishes them in that order, one at a time."""

    def __init__(self, limits: BufferLimits) -> None:
        self._limits = limits
        self._queue: deque[_Pending] = deque()
        self._bytes = 0
        self._next_sequence = 1
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self.failed = asyncio.Event()
        self.failure: BridgeError | None = None
        self.stats = ForwardStats()

    @property
    def pending(self) -> int:
        """Updates recorded but not yet acknowledged by the service."""
        return len(self._queue)

    def enqueue(self, update: object) -> None:
        """Records one update. Synchronous on purpose: see the module docstring."""
        if self.failure is not None:
            return
        if not isinstance(update, Mapping):
            log.warning("agent sent a session/update without an update object; skipped")
            return
        size = len(json.dumps(update, separators=(",", ":")).encode())
        if len(self._queue) >= self._limits.max_updates:
            self._fail(BufferFullError("updates", self._limits.max_updates))
        elif self._bytes + size > self._limits.max_bytes:
            self._fail(BufferFullError("bytes", self._limits.max_bytes))
        else:
            self._queue.append(_Pending(self._next_sequence, update, size))
            self._next_sequence += 1
            self._bytes += size
            self._idle.clear()
            self._wake.set()

    def start(self, publish: Publish) -> None:
        """Starts draining into `publish(sequence, update)`; buffered updates go first."""
        self._task = asyncio.create_task(self._drain(publish), name="shellexec.bridge.drain")

    async def flush(self) -> None:
        """Returns once every recorded update is acknowledged; raises the drain's failure."""
        idle = asyncio.create_task(self._idle.wait())
        failed = asyncio.create_task(self.failed.wait())
        try:
            await asyncio.wait({idle, failed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
            failed.cancel()
        if self.failure is not None:
            raise self.failure

    async def stop(self) -> None:
        """Stops the drain task (whatever is still buffered is abandoned)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _fail(self, error: BridgeError) -> None:
        if self.failure is None:
            self.failure = error
            self.failed.set()

    async def _drain(self, publish: Publish) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    head = self._queue[0]
                    await self._publish(publish, head)
                    self._queue.popleft()
                    self._bytes -= head.size
                self._idle.set()
        except BridgeError as error:
            self._fail(error)

    async def _publish(self, publish: Publish, item: _Pending) -> None:
        try:
            duplicate = await publish(item.sequence, item.update)
        except ServiceRejectedError as error:
            # One malformed or oversized update must not sink the whole session.
            if error.code != "INVALID_ARGUMENT":
                raise
            self.stats.rejected += 1
            log.warning("service refused update #%d (%s): %s; skipped", item.sequence,
                        item.update.get("sessionUpdate"), error.details)
            return
        if duplicate:
            self.stats.duplicates += 1
        else:
            self.stats.published += 1
        log.debug("published #%d (%s)%s", item.sequence, item.update.get("sessionUpdate"),
                  " again: already stored" if duplicate else "")

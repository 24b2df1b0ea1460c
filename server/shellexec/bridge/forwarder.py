"""The ordered, sequenced, bounded buffer between the agent and PublishUpdate.

`enqueue` is synchronous: the stream observer calls it for every `session/update` in the order
the agent wrote them, and it numbers each update (1, 2, 3 ... per service session) on the spot.
One task drains the buffer head first, publishing one update at a time and retrying each with
its own sequence number until the service has it, so arrival order is publish order and a
retry after a lost answer is deduplicated by the service instead of applied twice.

While the service is away the buffer grows; past `BufferLimits` (a count and a byte size) the
forwarder fails with `BufferFullError` rather than eat the machine's memory. See docs/adr/0030
and docs/adr/0031.

Each update is converted once, when it arrives, into the google.protobuf.Value that is queued
and published (`publishable`). One that cannot be published at all is skipped then, and one
the service refuses for itself alone (`refuses_only_the_update`) when it is answered: both with
a warning naming its number and why. A terminal's output chunks still waiting are merged into
one bounded chunk (`coalescing`), so terminal output never fills the buffer. Whatever else
ends the drain becomes the forwarder's failure, so `flush` never waits forever (ADR 0123).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2

from shellexec.bridge.coalescing import (
    Chunk,
    encoded_length,
    joined,
    merge_position,
    read_chunk,
    with_data,
)
from shellexec.bridge.errors import (
    BridgeError,
    BufferFullError,
    ForwardingError,
    ServiceRejectedError,
    refuses_only_the_update,
)
from shellexec.bridge.publishable import CUT_HEAD_BYTES, CUT_TAIL_BYTES, Unpublishable, encoded

log = logging.getLogger("shellexec.bridge")

Update = Mapping[str, Any]
Publish = Callable[[int, struct_pb2.Value], Awaitable[bool]]

DEFAULT_MAX_UPDATES = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BufferLimits:
    """At most `max_updates` updates may wait, holding at most `max_bytes` bytes of memory
    (weighed as their encoded size and 64 bytes per JSON value, `publishable.Encoded`)."""

    max_updates: int = DEFAULT_MAX_UPDATES
    max_bytes: int = DEFAULT_MAX_BYTES


@dataclass(frozen=True, slots=True)
class _Pending:
    sequence: int
    value: struct_pb2.Value
    kind: str
    weight: int
    chunk: Chunk | None = None
    merged: bool = False

    def payload(self) -> struct_pb2.Value:
        """What is published: the update, or for merged chunks the update with their data
        (encoded once, when it is published, however often it was merged)."""
        if self.chunk is None or not self.merged:
            return self.value
        return with_data(self.value, self.chunk)


@dataclass(slots=True)
class ForwardStats:
    """What the forwarder did: published (new), duplicates (already stored), rejected
    (skipped: refused or unpublishable), merged (terminal chunks joined to a waiting one)."""

    published: int = 0
    duplicates: int = 0
    rejected: int = 0
    merged: int = 0


class Forwarder:
    """Buffers updates in arrival order and publishes them in that order, one at a time."""

    def __init__(self, limits: BufferLimits, agent: str | None = None) -> None:
        self._limits = limits
        self._agent = agent  # the normalization hint, for checking a cut update
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
            if isinstance(self.failure, BufferFullError):
                self.failure.dropped += 1
            return
        if not isinstance(update, Mapping):
            log.warning("agent sent a session/update without an update object; skipped")
            return
        sequence = self._next_sequence
        self._next_sequence += 1
        chunk = read_chunk(update)
        value = (encoded(update, agent=self._agent) if chunk is None
                 else encoded(_without_data(update), data=update["data"], agent=self._agent))
        if isinstance(value, Unpublishable):
            self.stats.rejected += 1
            log.warning("update #%d (%s) cannot be published: %s; skipped", sequence,
                        _kind(update), value.reason)
            return
        if value.cut_from:
            log.warning("update #%d (%s) is %d bytes encoded, over the service's limit: its "
                        "output fields are cut to their first %d and last %d bytes, more than "
                        "the service keeps of them", sequence, _kind(update), value.cut_from,
                        CUT_HEAD_BYTES, CUT_TAIL_BYTES)
        if chunk is None or not self._merge(chunk):
            self._append(_Pending(sequence, value.value, _kind(update), value.weight, chunk))

    def _append(self, item: _Pending) -> None:
        if len(self._queue) >= self._limits.max_updates:
            self._full("updates", self._limits.max_updates)
        elif self._bytes + item.weight > self._limits.max_bytes:
            self._full("bytes", self._limits.max_bytes)
        else:
            self._queue.append(item)
            self._bytes += item.weight
            self._idle.clear()
            self._wake.set()

    def _merge(self, chunk: Chunk) -> bool:
        """Joins `chunk` to a chunk of its terminal still waiting; False when none may take
        it. The head of the queue may be in flight, so it never changes."""
        waiting = len(self._queue) - 1
        newest_first = (self._queue[-1 - offset].chunk for offset in range(max(waiting, 0)))
        position = merge_position(newest_first, chunk)
        if position is None:
            return False
        index = len(self._queue) - 1 - position
        earlier = self._queue[index]
        assert earlier.chunk is not None  # merge_position only points at chunks
        both = joined(earlier.chunk, chunk)
        weight = (earlier.weight + encoded_length(len(both.data))
                  - encoded_length(len(earlier.chunk.data)))
        if self._bytes - earlier.weight + weight > self._limits.max_bytes:
            self._full("bytes", self._limits.max_bytes)
            return True
        self._queue[index] = _Pending(earlier.sequence, earlier.value, earlier.kind, weight,
                                      both, merged=True)
        self._bytes += weight - earlier.weight
        self.stats.merged += 1
        return True

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

    def _full(self, what: str, limit: int) -> None:
        """The buffer is full: the update that did not fit is the first one dropped."""
        error = BufferFullError(what, limit, len(self._queue))
        error.dropped = 1
        self._fail(error)

    def _fail(self, error: BridgeError) -> None:
        if self.failure is None:
            self.failure = error
            self.failed.set()

    async def _drain(self, publish: Publish) -> None:
        sequence = 0
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    head = self._queue[0]
                    sequence = head.sequence
                    await self._publish(publish, head)
                    self._queue.popleft()
                    self._bytes -= head.weight
                self._idle.set()
        except BridgeError as error:
            self._fail(error)
        except Exception as error:
            # Whatever ends the drain must end flush() too, or the bridge would wait forever.
            log.debug("the drain stopped on update #%d", sequence, exc_info=True)
            self._fail(ForwardingError(sequence, error))

    async def _publish(self, publish: Publish, item: _Pending) -> None:
        try:
            duplicate = await publish(item.sequence, item.payload())
        except ServiceRejectedError as error:
            # One update the service cannot take must not sink the whole session.
            if not refuses_only_the_update(error):
                raise
            self.stats.rejected += 1
            log.warning("service refused update #%d (%s): %s: %s; skipped", item.sequence,
                        item.kind, error.code, error.details)
            return
        if duplicate:
            self.stats.duplicates += 1
        else:
            self.stats.published += 1
        log.debug("published #%d (%s)%s", item.sequence, item.kind,
                  " again: already stored" if duplicate else "")


def _kind(update: Update) -> str:
    """The update's `sessionUpdate`, short and escaped: it is the agent's text, and a newline
    in it must not forge a log line."""
    return str(update.get("sessionUpdate"))[:64].encode("unicode_escape").decode("ascii")


def _without_data(update: Update) -> Update:
    return {key: value for key, value in update.items() if key != "data"}


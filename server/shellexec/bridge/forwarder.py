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
a warning naming its number and why. A `session/update` without an update object (null,
missing, not a JSON object) is skipped as it arrives, before it is numbered; each of the first
ten is warned of, then only a tally at each power of ten (`flood_log`), so an agent sending
them in a loop cannot fill the log. All three are counted in `ForwardStats.rejected`, the
closing line's `refused`. A terminal's output chunks still waiting are merged into
one bounded chunk, and older output still waiting is cut (`coalescing.WaitingUpdates`, which also
learns from the answers which tool calls the service stores), so terminal output never fills
the buffer, whatever is interleaved with it. Whatever else ends the drain becomes the
forwarder's failure, so `flush` never waits forever (ADR 0123).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2

from shellexec.bridge.coalescing import Waiting, WaitingUpdates, read_chunk
from shellexec.bridge.errors import (
    BridgeError,
    BufferFullError,
    ForwardingError,
    ServiceRejectedError,
    refuses_only_the_update,
)
from shellexec.bridge.flood_log import FloodLog
from shellexec.bridge.publishable import CUT_HEAD_BYTES, CUT_TAIL_BYTES, Unpublishable, encoded
from shellexec.vocabulary import ACP_TOOL_UPDATES

log = logging.getLogger("shellexec.bridge")

Update = Mapping[str, Any]
Publish = Callable[[int, struct_pb2.Value], Awaitable[bool]]

DEFAULT_MAX_UPDATES = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

# The tally of a flood of `session/update` frames without an update object.
_UPDATELESS_TALLY = ("agent sent {count} session/updates without an update object so far "
                     "(the latest: {latest}): skipped")


@dataclass(frozen=True, slots=True)
class BufferLimits:
    """At most `max_updates` updates may wait, holding at most `max_bytes` bytes of memory
    (weighed as their encoded size and 64 bytes per JSON value, `publishable.Encoded`)."""

    max_updates: int = DEFAULT_MAX_UPDATES
    max_bytes: int = DEFAULT_MAX_BYTES


@dataclass(slots=True)
class ForwardStats:
    """What the forwarder did: published (new), duplicates (already stored), rejected
    (skipped: refused by the service, unpublishable, or no update object at all; `run.py`
    adds those it drops before they get here), merged (terminal chunks joined to a waiting
    one), cut_bytes (terminal output cut while it waited, which the service would have cut too)."""

    published: int = 0
    duplicates: int = 0
    rejected: int = 0
    merged: int = 0
    cut_bytes: int = 0


class Forwarder:
    """Buffers updates in arrival order and publishes them in that order, one at a time."""

    def __init__(self, limits: BufferLimits, agent: str | None = None) -> None:
        self._limits = limits
        self._agent = agent  # the normalization hint, for checking a cut update
        self._waiting = WaitingUpdates()
        self._next_sequence = 1
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self.failed = asyncio.Event()
        self.failure: BridgeError | None = None
        self.stats = ForwardStats()
        self._updateless = FloodLog(_UPDATELESS_TALLY)

    @property
    def pending(self) -> int:
        """Updates recorded but not yet acknowledged by the service."""
        return self._waiting.count

    def enqueue(self, update: object) -> None:
        """Records one update. Synchronous on purpose: see the module docstring."""
        if self.failure is not None:
            if isinstance(self.failure, BufferFullError):
                self.failure.dropped += 1
            return
        if not isinstance(update, Mapping):
            self.stats.rejected += 1
            what = _json_kind(update)
            self._updateless.note(f"agent sent a session/update without an update object "
                                  f"({what}); skipped", what)
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
        item = Waiting(sequence, value.value, _kind(update), value.weight, chunk,
                       tool_call=_tool_call(update))
        if chunk is None:
            self._append(item, update)
        else:
            self._add_chunk(item)

    def _append(self, item: Waiting, update: Update) -> None:
        if self._waiting.count >= self._limits.max_updates:
            self._full("updates", self._limits.max_updates)
        elif self._waiting.weight + item.weight > self._limits.max_bytes:
            self._full("bytes", self._limits.max_bytes)
        else:
            self._waiting.add(item, update)
            self._idle.clear()
            self._wake.set()

    def _add_chunk(self, item: Waiting) -> None:
        """Queues a terminal chunk, or merges it into one still waiting; the output cut
        meanwhile may make room. The head of the queue may be in flight: it never changes."""
        cut = self._waiting.cut_bytes
        if self._waiting.add_chunk(item):
            self.stats.merged += 1
        self.stats.cut_bytes += self._waiting.cut_bytes - cut
        self._idle.clear()
        self._wake.set()
        # Checked once it is queued (merging and cutting may make room): it is counted among
        # those waiting, not among those dropped.
        if self._waiting.count > self._limits.max_updates:
            self._full("updates", self._limits.max_updates, dropped=0)
        elif self._waiting.weight > self._limits.max_bytes:
            self._full("bytes", self._limits.max_bytes, dropped=0)

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

    def _full(self, what: str, limit: int, dropped: int = 1) -> None:
        """The buffer is full: the update that did not fit is the first one dropped, unless it
        was queued before the limit was checked (`dropped` 0)."""
        error = BufferFullError(what, limit, self._waiting.count)
        error.dropped = dropped
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
                while (head := self._waiting.head()) is not None:
                    sequence = head.sequence
                    stored = await self._publish(publish, head)
                    self._waiting.published(head, stored)
                self._idle.set()
        except BridgeError as error:
            self._fail(error)
        except Exception as error:
            # Whatever ends the drain must end flush() too, or the bridge would wait forever.
            log.debug("the drain stopped on update #%d", sequence, exc_info=True)
            self._fail(ForwardingError(sequence, error))

    async def _publish(self, publish: Publish, item: Waiting) -> bool:
        """Publishes `item`; whether the service has it (False: refused and skipped)."""
        try:
            duplicate = await publish(item.sequence, item.payload())
        except ServiceRejectedError as error:
            # One update the service cannot take must not sink the whole session.
            if not refuses_only_the_update(error):
                raise
            self.stats.rejected += 1
            log.warning("service refused update #%d (%s): %s: %s; skipped", item.sequence,
                        item.kind, error.code, error.details)
            return False
        if duplicate:
            self.stats.duplicates += 1
        else:
            self.stats.published += 1
        log.debug("published #%d (%s)%s", item.sequence, item.kind,
                  " again: already stored" if duplicate else "")
        return True


def _kind(update: Update) -> str:
    """The update's `sessionUpdate`, short and escaped: it is the agent's text, and a newline
    in it must not forge a log line."""
    return str(update.get("sessionUpdate"))[:64].encode("unicode_escape").decode("ascii")


def _json_kind(value: object) -> str:
    """What an update that is no JSON object is, as JSON names it (never the agent's text)."""
    if value is None:
        return "null or missing"
    for kinds, name in (((bool,), "a boolean"), ((int, float), "a number"), ((str,), "a string"),
                        ((list, tuple), "an array")):
        if isinstance(value, kinds):
            return name
    return "no JSON object"


def _tool_call(update: Update) -> str | None:
    """The call a tool update names (the service stores it once the update is answered)."""
    call = update.get("toolCallId")
    return call if update.get("sessionUpdate") in ACP_TOOL_UPDATES and isinstance(
        call, str) else None


def _without_data(update: Update) -> Update:
    return {key: value for key, value in update.items() if key != "data"}


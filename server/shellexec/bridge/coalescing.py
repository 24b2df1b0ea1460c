"""A terminal's output, bounded the way the service bounds it, while it waits to be published.

The service keeps only the newest MAX_OUTPUT_STREAM_BYTES of a stream; older terminal output
it receives is cut off again at once. So the bridge never needs more than that bound of any
terminal's output, plus `UTF8_MARGIN` bytes: a UTF-8 character is at most 4 bytes long, so
the service decodes every kept byte but the first three as it would have decoded the whole
output, those first bytes fall outside its bound, and the kept bytes still exceed the bound
whenever the whole output did, which marks the stream truncated. The record the service
stores from `output_tail(output)` is the one it stores from `output` (ADR 0123). With
masking at rest, the service masks each chunk as it arrives and bounds the stream after: a
credential whose start a cut took off is not recognised, and its rest would be stored in
clear. So LONGEST_CUT_TOKEN more bytes are kept (the longest such rest the read-time masking
covers): any rest of a token falls within what the service cuts off again.

The forwarder's updates wait in `WaitingUpdates` while the service lags. Whatever is
interleaved with a terminal's `terminal_output_chunk`s there, they are changed only in ways no
stored record sees once everything is published (ADR 0123, since 2026-12-06). Where a chunk
goes depends on what the service stores when it is published (ADR 0086, 0087): a chunk whose
`_meta` names a call the service stores goes into that call, whatever else happened; any other
goes where its terminal is linked, or is held and later released, in arrival order, into the
call that names its terminal. So the buffer follows which calls the service stores: those a
tool update was answered for, and those a waiting tool update names (it is published first;
the service refuses a tool update only when it is malformed, and then no chunk naming that
call joins another any more). Three things may change a waiting chunk:

1. **Merged into the terminal's newest waiting chunk** of the same `_meta` (`joined`, where
   that one waits) when every update waiting after it is a chunk of another terminal, and the
   two name two different calls the service stores (`merge_position`): each goes into its own
   call, so no record's fold sees the order change.
2. **Appended to the newest waiting update** when that is a chunk with the same `_meta` (of
   any terminal), naming a call the service stores, and an earlier chunk of the chunk's own
   terminal waits in its segment (below): that one will have linked the terminal to the call
   (and released what the service held of it), so the chunk does nothing but add its bytes to
   the call's output, right where it stands. Two terminals of one call write one stream, in
   arrival order, so their chunks cannot pass each other; this keeps them from leaving one
   waiting update per read.
3. **Cut**: a terminal's waiting chunks of one `_meta` between which nothing happened that
   could change where they go or what reads them (a `_Segment`) hold at most TAIL_BYTES of
   data (with what rule 2 added to them), not counting the one being published: older bytes
   are cut from the oldest of them, and a chunk left empty is taken out of the buffer unless
   it is the first of its segment. The bytes cut are followed, in the same call's output, by
   at least TAIL_BYTES newer ones, so the service would have cut them off as well (as above);
   between them, updates only add to that output or replace it, or end a process (an
   incomplete UTF-8 sequence then becomes U+FFFD, which falls outside the bound too). The
   first chunk stays, emptied if need be, where it links the terminal; a later one only adds
   bytes, so taking it out changes nothing else.

A segment ends, for a terminal, at an update of that terminal that is no mergeable chunk (it
may move the terminal, replace or clear its output, or end it), at a chunk of it with other
`_meta`, and at a tool update: while the service is not known to store the call the chunks
name, at any tool update (one may create that call, or name the terminal in its content and
link it: where its output goes changes); once it is, only at a tool update of that call (other
calls' updates change nothing in it). Chat chunks and updates the service ignores end nothing:
the service folds them into no tool call. So a terminal's waiting output stays within about
TAIL_BYTES while the agent chats or works on other calls, however fast it prints, and grows by
at most TAIL_BYTES per update that ends its segment.

The head of the buffer may be in flight and is retried under its sequence: it never changes.
"""

from __future__ import annotations

import base64
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from google.protobuf import struct_pb2

from shellexec.normalize.terminal_updates import decode_data, link_hint
from shellexec.projection.secrets import LONGEST_CUT_TOKEN
from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES
from shellexec.vocabulary import ACP_TERMINAL_OUTPUT_CHUNK, ACP_TERMINAL_UPDATES, ACP_TOOL_UPDATES

UTF8_MARGIN = 4
TAIL_BYTES = MAX_OUTPUT_STREAM_BYTES + UTF8_MARGIN + LONGEST_CUT_TOKEN

# The fields of a chunk the bridge may merge: any other field would be lost or duplicated.
_CHUNK_FIELDS = frozenset({"sessionUpdate", "terminalId", "data", "_meta"})
# The tool calls the service is known to store, remembered at most: forgetting one only
# merges less.
MAX_STORED_CALLS = 65_536
# Updates taken out of the buffer are dropped from its deque once they outnumber the rest.
_TAKEN_OUT_SLACK = 64


def output_tail(data: bytes) -> bytes:
    """The newest TAIL_BYTES of `data` (all of it when shorter)."""
    return data[-TAIL_BYTES:] if len(data) > TAIL_BYTES else data


class OutputTail:
    """A terminal's output as the bridge records it: its newest TAIL_BYTES."""

    def __init__(self) -> None:
        self._data = bytearray()

    def append(self, data: bytes) -> None:
        self._data += data
        if len(self._data) > TAIL_BYTES:
            del self._data[:len(self._data) - TAIL_BYTES]

    def data(self) -> bytes:
        return bytes(self._data)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A mergeable `terminal_output_chunk`: its terminal, `_meta`, named call and bytes."""

    terminal_id: str
    meta: object
    call: str | None
    data: bytes


def read_chunk(update: Mapping[str, Any]) -> Chunk | None:
    """`update` as a mergeable chunk, or None (another update, or a chunk with other fields
    or data that is not base64)."""
    if update.get("sessionUpdate") != ACP_TERMINAL_OUTPUT_CHUNK or not _CHUNK_FIELDS.issuperset(
            update):
        return None
    terminal_id = update.get("terminalId")
    data = decode_data(update.get("data"))
    if not isinstance(terminal_id, str) or data is None:
        return None
    return Chunk(terminal_id, update.get("_meta"), link_hint(update), data)


def _independent(queued: Chunk | None, chunk: Chunk, stored: Container[str]) -> bool:
    """Whether `chunk` may move before `queued` without changing any record: they name two
    calls the service stores when they are published, so each goes into its own call."""
    return (queued is not None and queued.terminal_id != chunk.terminal_id
            and queued.call is not None and chunk.call is not None
            and queued.call != chunk.call and queued.call in stored and chunk.call in stored)


def merge_position(queued_newest_first: Iterable[Chunk | None], chunk: Chunk,
                   stored: Container[str]) -> int | None:
    """How far from the newest queued update (0: the newest) `chunk` merges into, or None.

    `queued_newest_first` reads the updates that may still change (not the one being
    published), newest first; None stands for an update that is no mergeable chunk.
    `stored` holds the calls the service will store before any of them is published.
    A call it does not store yet folds no chunk naming it: the chunk goes where its terminal
    is linked, or waits to be released in arrival order, maybe into the same call as another
    terminal's (ADR 0086).
    """
    for position, queued in enumerate(queued_newest_first):
        if queued is not None and queued.terminal_id == chunk.terminal_id:
            return position if queued.meta == chunk.meta else None
        if not _independent(queued, chunk, stored):
            return None
    return None


def joined(earlier: Chunk, later: Chunk) -> Chunk:
    """`earlier` holding the tail of both chunks' data (where `earlier` waits)."""
    return Chunk(earlier.terminal_id, earlier.meta, earlier.call,
                 output_tail(earlier.data + later.data))


def with_data(update: struct_pb2.Value, chunk: Chunk) -> struct_pb2.Value:
    """The chunk update `update` (as it is published) carrying `chunk`'s data instead of its
    own; `update` itself is left as it was."""
    merged = struct_pb2.Value()
    merged.CopyFrom(update)
    merged.struct_value.fields["data"].string_value = base64.b64encode(chunk.data).decode(
        "ascii")
    return merged


def encoded_length(data_bytes: int) -> int:
    """How long the padded base64 of `data_bytes` bytes is."""
    return 4 * -(-data_bytes // 3)


@dataclass(eq=False, slots=True)
class Waiting:
    """One update waiting to be published: its number, the Value published, its kind (for
    logs), the memory it holds (`publishable.Encoded.weight`), and for a mergeable chunk its
    terminal and current data (`merged`: no longer the data its Value was made with), for a
    tool update the call it names."""

    sequence: int
    value: struct_pb2.Value
    kind: str
    weight: int
    chunk: Chunk | None = None
    tool_call: str | None = None
    merged: bool = False
    taken_out: bool = False
    segment: _Segment | None = None

    def payload(self) -> struct_pb2.Value:
        """What is published: the update, or for merged chunks the update with their data
        (encoded once, when it is published, however often it was merged)."""
        if self.chunk is None or not self.merged:
            return self.value
        return with_data(self.value, self.chunk)


@dataclass(eq=False, slots=True)
class _Segment:
    """Waiting chunks of one terminal with one `_meta` (the module docstring's rule 3); the
    first is never taken out. `tool_updates_at` and `call_updates_at` are the tool updates
    counted (all, and those of the named call) when a chunk of the terminal last came."""

    terminal_id: str
    meta: object
    call: str | None
    entries: deque[Waiting] = field(default_factory=deque)
    data_bytes: int = 0
    tool_updates_at: int = 0
    call_updates_at: int = 0


class _Calls:
    """The calls `holds` says yes to, as a container."""

    def __init__(self, holds: Callable[[str], bool]) -> None:
        self._holds = holds

    def __contains__(self, call: object) -> bool:
        return isinstance(call, str) and self._holds(call)


class WaitingUpdates:
    """The forwarder's buffer: updates in arrival order, the head first; terminal output in
    it is merged and cut as the module docstring says. `count` and `weight` are those of the
    updates still to be published."""

    def __init__(self) -> None:
        self._queue: deque[Waiting] = deque()
        self._taken_out = 0  # updates taken out but still in `_queue`
        self.count = 0
        self.weight = 0
        self.merged = 0  # chunks merged into a waiting one
        self.cut_bytes = 0  # terminal output cut while it waited
        self._segments: dict[str, _Segment] = {}  # each terminal's latest segment
        self._tool_updates = 0
        # Tool updates of each call a segment names, and how many segments name it.
        self._call_updates: dict[str, int] = {}
        self._naming: dict[str, int] = {}
        self._stored: dict[str, None] = {}  # calls the service stores, oldest first
        self._announced: dict[str, int] = {}  # tool updates naming each call still waiting

    def head(self) -> Waiting | None:
        """The oldest update still to be published (being published, maybe), if any."""
        return self._queue[0] if self._queue else None

    def published(self, item: Waiting, stored: bool) -> None:
        """The head `item` is done with; `stored`: the service has it (not refused)."""
        assert self._queue[0] is item
        self._queue.popleft()
        self.count -= 1
        self.weight -= item.weight
        self._skip_taken_out()
        if item.segment is not None:
            segment = item.segment
            segment.entries.popleft()
            segment.data_bytes -= len(item.chunk.data) if item.chunk is not None else 0
            if not segment.entries:
                self._end(segment)
        if item.tool_call is not None:
            self._answered(item.tool_call, stored)

    def add(self, item: Waiting, update: Mapping[str, Any]) -> None:
        """Queues `item`, made of `update`, which is no mergeable chunk."""
        kind = update.get("sessionUpdate")
        if kind in ACP_TOOL_UPDATES:
            self._tool_updates += 1
            if item.tool_call is not None:
                self._announced[item.tool_call] = self._announced.get(item.tool_call, 0) + 1
                if item.tool_call in self._call_updates:
                    self._call_updates[item.tool_call] += 1
        elif kind in ACP_TERMINAL_UPDATES and isinstance(update.get("terminalId"), str):
            # It may move, replace, clear or end the terminal: its segment ends.
            self._segments.pop(update["terminalId"], None)
        self._push(item)

    def add_chunk(self, item: Waiting) -> bool:
        """Queues the mergeable chunk `item`, or merges it into a waiting update (True), and
        cuts the output its segment holds beyond TAIL_BYTES."""
        chunk = item.chunk
        assert chunk is not None
        own = self._open_segment(chunk)
        target = self._merge_target(chunk, own)
        if target is not None:
            assert target.chunk is not None
            assert target.segment is not None
            self._set_data(target, output_tail(target.chunk.data + chunk.data))
            self.merged += 1
            changed = target.segment
            self._touch(changed)
        else:
            changed = own if own is not None else self._new_segment(chunk)
            item.segment = changed
            changed.entries.append(item)
            changed.data_bytes += len(chunk.data)
            self._push(item)
        if own is not None:
            self._touch(own)
        self._cut(changed)
        return target is not None

    def output_bytes(self) -> dict[str, int]:
        """The bytes of terminal output waiting, by the terminal whose chunk holds them."""
        held: dict[str, int] = {}
        for item in self._queue:
            if item.chunk is not None and not item.taken_out:
                held[item.chunk.terminal_id] = (held.get(item.chunk.terminal_id, 0)
                                                + len(item.chunk.data))
        return held

    # -- inside ------------------------------------------------------------------------------

    def _push(self, item: Waiting) -> None:
        self._queue.append(item)
        self.count += 1
        self.weight += item.weight

    def stores(self, call: str | None) -> bool:
        """Whether the service will store `call` before any waiting chunk is published: it
        answered an update naming it, or one waits (the service refuses a tool update only
        when it is malformed, see `_answered`)."""
        return call is not None and (call in self._stored or call in self._announced)

    def _answered(self, call: str, stored: bool) -> None:
        """A tool update naming `call` was published (`stored`) or refused."""
        self._announced[call] -= 1
        if not self._announced[call]:
            del self._announced[call]
        if stored:
            if call not in self._stored:
                self._stored[call] = None
                if len(self._stored) > MAX_STORED_CALLS:
                    del self._stored[next(iter(self._stored))]
        elif not self.stores(call):
            # Chunks naming it were taken for going into it: none joins those any more.
            for terminal_id in [terminal_id for terminal_id, segment in self._segments.items()
                                if segment.call == call]:
                del self._segments[terminal_id]

    def _open_segment(self, chunk: Chunk) -> _Segment | None:
        """The terminal's latest segment, if `chunk` belongs to it (nothing ended it since)."""
        segment = self._segments.get(chunk.terminal_id)
        if segment is None or segment.meta != chunk.meta:
            return None
        if self.stores(chunk.call):
            assert chunk.call is not None  # stores
            still = self._call_updates[chunk.call] == segment.call_updates_at
        else:
            still = self._tool_updates == segment.tool_updates_at
        return segment if still else None

    def _new_segment(self, chunk: Chunk) -> _Segment:
        segment = _Segment(chunk.terminal_id, chunk.meta, chunk.call)
        if chunk.call is not None:
            self._naming[chunk.call] = self._naming.get(chunk.call, 0) + 1
            self._call_updates.setdefault(chunk.call, 0)
        self._touch(segment)
        self._segments[chunk.terminal_id] = segment
        return segment

    def _touch(self, segment: _Segment) -> None:
        segment.tool_updates_at = self._tool_updates
        if segment.call is not None:
            segment.call_updates_at = self._call_updates[segment.call]

    def _end(self, segment: _Segment) -> None:
        """`segment` holds no waiting chunk any more."""
        if self._segments.get(segment.terminal_id) is segment:
            del self._segments[segment.terminal_id]
        if segment.call is not None:
            self._naming[segment.call] -= 1
            if not self._naming[segment.call]:
                del self._naming[segment.call]
                del self._call_updates[segment.call]

    def _newest_first(self) -> Iterator[Waiting]:
        """The waiting updates that may change (not the head), newest first."""
        head = self.head()
        for item in reversed(self._queue):
            if item is head:
                return
            if not item.taken_out:
                yield item

    def _merge_target(self, chunk: Chunk, own: _Segment | None) -> Waiting | None:
        """The waiting chunk `chunk` merges into (rules 1 and 2), if any."""
        seen: list[Waiting] = []

        def chunks() -> Iterator[Chunk | None]:
            for item in self._newest_first():
                seen.append(item)
                yield item.chunk

        position = merge_position(chunks(), chunk, _Calls(self.stores))
        if position is not None:
            return seen[position]
        if own is None or not self.stores(chunk.call):
            return None
        newest = next(self._newest_first(), None)
        if newest is None or newest.chunk is None or newest.chunk.meta != chunk.meta:
            return None
        return newest

    def _set_data(self, item: Waiting, data: bytes) -> None:
        assert item.chunk is not None
        assert item.segment is not None
        before = len(item.chunk.data)
        if not item.merged:
            # Published with `chunk`'s data from now on: the Value's own copy is let go.
            item.value.struct_value.fields["data"].string_value = ""
            item.merged = True
        change = encoded_length(len(data)) - encoded_length(before)
        item.weight += change
        self.weight += change
        item.segment.data_bytes += len(data) - before
        item.chunk = replace(item.chunk, data=data)

    def _cut(self, segment: _Segment) -> None:
        """Cuts `segment`'s oldest bytes beyond TAIL_BYTES (the head's are not counted: it
        never changes), taking out each chunk left empty but the first."""
        entries = segment.entries
        first = 1 if entries[0] is self.head() else 0
        excess = segment.data_bytes - TAIL_BYTES
        if first:
            excess -= len(entries[0].chunk.data) if entries[0].chunk is not None else 0
        index = first
        while excess > 0:
            item = entries[index]
            assert item.chunk is not None
            size = len(item.chunk.data)
            if size > excess:
                self._set_data(item, item.chunk.data[excess:])
                self.cut_bytes += excess
                return
            if size:
                self._set_data(item, b"")
                self.cut_bytes += size
                excess -= size
            if index == 0:
                index = 1  # the segment's first stays, empty
            else:
                del entries[index]
                self._take_out(item)

    def _take_out(self, item: Waiting) -> None:
        item.taken_out = True
        item.segment = None
        self.count -= 1
        self.weight -= item.weight
        self._taken_out += 1
        if self._taken_out > max(self.count, _TAKEN_OUT_SLACK):
            self._queue = deque(kept for kept in self._queue if not kept.taken_out)
            self._taken_out = 0

    def _skip_taken_out(self) -> None:
        while self._queue and self._queue[0].taken_out:
            self._queue.popleft()
            self._taken_out -= 1

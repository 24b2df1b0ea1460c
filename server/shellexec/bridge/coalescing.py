"""A terminal's output, bounded the way the service bounds it, and merged while it waits.

The service keeps only the newest MAX_OUTPUT_STREAM_BYTES of a stream; older terminal output
it receives is cut off again at once. So the bridge never needs more than that bound of any
terminal's output, plus `UTF8_MARGIN` bytes: a UTF-8 character is at most 4 bytes long, so
the service decodes every kept byte but the first three as it would have decoded the whole
output, those first bytes fall outside its bound, and the kept bytes still exceed the bound
whenever the whole output did, which marks the stream truncated. The record the service
stores from `output_tail(output)` is the one it stores from `output` (ADR 0123).

Two `terminal_output_chunk`s of one terminal that wait in the queue become one chunk whose
data is the tail of both (`joined`), kept where the earlier one waits, when every update
queued between them is a chunk of another terminal that names another tool call (so the fold
of no record sees the order change).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2

from shellexec.normalize.terminal_updates import decode_data, link_hint
from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES
from shellexec.vocabulary import ACP_TERMINAL_OUTPUT_CHUNK

UTF8_MARGIN = 4
TAIL_BYTES = MAX_OUTPUT_STREAM_BYTES + UTF8_MARGIN

# The fields of a chunk the bridge may merge: any other field would be lost or duplicated.
_CHUNK_FIELDS = frozenset({"sessionUpdate", "terminalId", "data", "_meta"})


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


def _independent(queued: Chunk | None, chunk: Chunk) -> bool:
    """Whether `chunk` may move before `queued` without changing any record."""
    return (queued is not None and queued.terminal_id != chunk.terminal_id
            and queued.call is not None and chunk.call is not None
            and queued.call != chunk.call)


def merge_position(queued_newest_first: Iterable[Chunk | None], chunk: Chunk) -> int | None:
    """How far from the newest queued update (0: the newest) `chunk` merges into, or None.

    `queued_newest_first` reads the updates that may still change (not the one being
    published), newest first; None stands for an update that is no mergeable chunk.
    """
    for position, queued in enumerate(queued_newest_first):
        if queued is not None and queued.terminal_id == chunk.terminal_id:
            return position if queued.meta == chunk.meta else None
        if not _independent(queued, chunk):
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

"""Merging a terminal's waiting output chunks, and the bounded tail the bridge keeps: the
service's record of the merged or cut output is exactly its record of the whole output."""

from __future__ import annotations

import base64
import functools
import random
from typing import Any

import pytest
from google.protobuf import json_format

from shellexec import normalize
from shellexec.bridge.coalescing import (
    TAIL_BYTES,
    Chunk,
    OutputTail,
    encoded_length,
    joined,
    merge_position,
    output_tail,
    read_chunk,
    with_data,
)
from shellexec.client import to_protobuf_value
from shellexec.normalize import ShellRecord
from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES

CALL = {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "make", "kind": "execute",
        "status": "in_progress"}


def _chunk_update(data: bytes, terminal: str = "t1", call: str | None = "c1"
                  ) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal,
                              "data": base64.b64encode(data).decode("ascii")}
    if call is not None:
        update["_meta"] = {"shellexec_tool_call_id": call}
    return update


def _chunk(data: bytes = b"x", terminal: str = "t1", call: str | None = "c1") -> Chunk:
    found = read_chunk(_chunk_update(data, terminal, call))
    assert found is not None
    return found


def _record(terminal_updates: list[dict[str, Any]]) -> ShellRecord:
    state = normalize.fold_all([CALL])
    for update in terminal_updates:
        state = normalize.fold(state, update)
    return normalize.shell_record(state)


@functools.cache
def _outputs() -> list[bytes]:
    rng = random.Random(7)
    text = "".join(rng.choice(["a", "é", "€", "𝄞", "\n"]) for _ in range(200_000)).encode()
    junk = bytes(rng.randrange(256) for _ in range(300_000))
    return [b"short\n", b"x" * (TAIL_BYTES + 1), text, junk, text + junk + text,
            b"\x80" * 400_000]


@pytest.mark.parametrize("output", _outputs(), ids=["short", "just-over", "utf8", "binary",
                                                    "mixed", "continuations"])
def test_the_tail_records_what_the_whole_output_records(output: bytes) -> None:
    reads = [output[i:i + 65_536] for i in range(0, len(output), 65_536)]
    whole = _record([_chunk_update(read) for read in reads])

    assert _record([_chunk_update(output_tail(output))]) == whole
    snapshot = {"sessionUpdate": "terminal_update", "terminalId": "t1",
                "output": {"data": base64.b64encode(output_tail(output)).decode("ascii")}}
    assert _record([snapshot]) == whole
    assert whole.output.truncated == (len(output) > MAX_OUTPUT_STREAM_BYTES)


@pytest.mark.parametrize("output", _outputs()[2:], ids=["utf8", "binary", "mixed",
                                                        "continuations"])
def test_merging_chunks_one_by_one_records_what_they_record(output: bytes) -> None:
    reads = [output[i:i + 65_536] for i in range(0, len(output), 65_536)]
    prefix = [_chunk_update(b"before\xe2\x82")]  # ends inside a character
    both = _chunk(reads[0])
    for read in reads[1:]:
        both = joined(both, _chunk(read))

    assert len(both.data) <= TAIL_BYTES
    update = json_format.MessageToDict(with_data(to_protobuf_value(_chunk_update(b"stale")),
                                                 both))
    assert _record([*prefix, update]) == _record(prefix + [_chunk_update(r) for r in reads])


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 65_536, TAIL_BYTES])
def test_the_encoded_length_is_base64_s(size: int) -> None:
    assert encoded_length(size) == len(base64.b64encode(b"x" * size))


def test_the_output_tail_keeps_the_newest_bytes() -> None:
    tail = OutputTail()
    for n in range(100):
        tail.append(bytes([n % 256]) * 10_000)
    assert tail.data() == output_tail(b"".join(bytes([n % 256]) * 10_000 for n in range(100)))
    assert len(tail.data()) == TAIL_BYTES


def test_a_chunk_merges_into_the_newest_waiting_chunk_of_its_terminal() -> None:
    assert merge_position([_chunk()], _chunk()) == 0
    assert merge_position([], _chunk()) is None


def test_it_passes_chunks_of_terminals_that_name_other_calls() -> None:
    queued = [_chunk(terminal="t2", call="c2"), _chunk(terminal="t3", call="c3"), _chunk()]
    assert merge_position(queued, _chunk()) == 2


@pytest.mark.parametrize("between", [
    pytest.param(_chunk(terminal="t2", call="c1"), id="another-terminal-of-the-same-call"),
    pytest.param(_chunk(terminal="t2", call=None), id="another-terminal-naming-no-call"),
    pytest.param(None, id="any-other-update"),
])
def test_it_stops_at_an_update_whose_order_matters(between: Chunk | None) -> None:
    assert merge_position([between, _chunk()], _chunk()) is None


def test_chunks_naming_no_call_merge_only_when_adjacent() -> None:
    mine = _chunk(call=None)
    assert merge_position([mine], _chunk(call=None)) == 0
    assert merge_position([_chunk(terminal="t2", call="c2"), mine], _chunk(call=None)) is None


def test_a_chunk_of_its_terminal_for_another_call_is_never_merged_into() -> None:
    assert merge_position([_chunk(call="c2")], _chunk(call="c1")) is None


@pytest.mark.parametrize("update", [
    pytest.param({**_chunk_update(b"x"), "extra": 1}, id="another-field"),
    pytest.param({**_chunk_update(b"x"), "data": "not base64!"}, id="bad-base64"),
    pytest.param({**_chunk_update(b"x"), "terminalId": 7}, id="terminal-id-not-a-string"),
    pytest.param({"sessionUpdate": "terminal_update", "terminalId": "t1"}, id="not-a-chunk"),
])
def test_only_plain_chunks_are_mergeable(update: dict[str, Any]) -> None:
    assert read_chunk(update) is None

"""How an output chunk is held in its row (ADR 0150): deflated when that is clearly smaller,
read back character for character, and a damaged row refused rather than trusted."""

from __future__ import annotations

import tracemalloc
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shellexec.store.packing import (
    PACK_FROM_BYTES,
    StoredChunk,
    UnpackError,
    pack,
    unpack,
)

from support.texts import random_text

# Text as agents print it: what SQLite and PostgreSQL store (no lone surrogates; NUL allowed).
_AGENT_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=3000)


def _round_trip(text: str) -> str:
    chunk = pack(text)
    return unpack(chunk.text, chunk.packed, chunk.text_bytes)


@given(_AGENT_TEXT)
def test_any_text_reads_back_as_it_was_with_its_utf8_size(text: str) -> None:
    chunk = pack(text)
    assert chunk.text_bytes == len(text.encode("utf-8"))
    assert (chunk.text == "") == (chunk.packed is not None) or text == ""
    assert _round_trip(text) == text


@pytest.mark.parametrize("line", [
    "PASSED tests/store/test_store.py::test_compaction\n",
    "\x1b[31merror\x1b[0m: unused variable `x` \u2192 \u7f16\u8bd1\u5931\u8d25 \U0001f525\n",
    "a\x00b\x00\ufffe\uffff\n",  # NUL and PostgreSQL's escape character, packed as bytes
])
def test_repetitive_output_is_packed_to_a_fraction_and_reads_back(line: str) -> None:
    text = line * 200
    chunk = pack(text)
    assert chunk.text == ""
    assert chunk.packed is not None
    assert len(chunk.packed) < chunk.text_bytes // 8
    assert _round_trip(text) == text


def test_a_short_chunk_stays_text() -> None:
    text = "x" * (PACK_FROM_BYTES - 1)
    assert pack(text) == StoredChunk(text, None, len(text))
    assert pack(text + "x").packed is not None


def test_a_chunk_deflate_cannot_shrink_by_an_eighth_stays_text() -> None:
    # 600 random characters: deflate keeps about 83 % of them, plus its code tables.
    text = random_text(600)
    assert len(zlib.compress(text.encode())) > len(text) * 7 // 8
    assert pack(text) == StoredChunk(text, None, len(text))
    long = random_text(50_000)  # the tables weigh little here: packed at about 83 %
    assert pack(long).packed is not None


def test_a_row_written_before_packing_reads_as_its_text() -> None:
    assert unpack("old output\n", None, None) == "old output\n"


@pytest.mark.parametrize(("packed", "text_bytes"), [
    (zlib.compress(b"y" * 10_000)[:-9], 10_000),  # cut short
    (zlib.compress(b"y" * 10_000), 9_999),  # more than its row says
    (zlib.compress(b"y" * 10_000), 10_001),  # less than its row says
    (zlib.compress(b"\x00" * 50_000_000), 100),  # a bomb: inflated no further than 100 bytes
    (zlib.compress(b"y" * 10_000) + b"tail", 10_000),  # bytes after the end
    (b"not deflate at all", 18),
    (zlib.compress(b"\xff\xfe" * 300), 600),  # not UTF-8
    (zlib.compress(b"y" * 600), None),  # no recorded size
    (zlib.compress(b"y" * 600), 0),
    (zlib.compress(b"y" * 600), -1),
    (zlib.compress(b"y" * 100), 100),  # too small to have been packed
])
def test_a_damaged_packed_row_is_refused(packed: bytes, text_bytes: int | None) -> None:
    with pytest.raises(UnpackError):
        unpack("", packed, text_bytes)


def _bomb(inflated_bytes: int) -> bytes:
    """Deflated zeros, made without holding them."""
    deflater = zlib.compressobj()
    block = bytes(1 << 20)
    return b"".join([*(deflater.compress(block) for _ in range(inflated_bytes >> 20)),
                     deflater.flush()])


@pytest.mark.parametrize("text_bytes", [0, 1000])
def test_a_damaged_row_is_not_inflated_past_its_recorded_size(text_bytes: int) -> None:
    """zlib reads a limit of 0 as no limit: a row recording 0 bytes would inflate whole."""
    bomb = _bomb(64 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(UnpackError):
            unpack("", bomb, text_bytes)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20

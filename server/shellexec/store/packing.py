"""Output chunks stored deflated when that makes them smaller (ADR 0150).

Shell output repeats itself (paths, test names, log prefixes, padding), so deflate makes real
commands' output three times smaller or more, and in WAL mode every byte not written is a
byte not written twice (the WAL, then the checkpoint). A chunk is packed only when it is long
enough for deflate to pay and comes out at least an eighth smaller; anything else stays text,
as every chunk written before migration step 16 is. Each new row records its text's UTF-8
size, so a stream is trimmed by its bytes without inflating anything.

Packing is the store's own representation: what a reader gets back is the text it was given,
character for character, on either engine (a packed chunk has no NUL for PostgreSQL to
refuse, so `nul_text` is not involved).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Final

# Below this a chunk stays text: deflate's framing and the work of inflating it on every read
# would buy a few bytes of a row that fits its page anyway. Above it there is no bound of
# packing's own: the fold hands the store no text longer than a stream's 256 KiB.
PACK_FROM_BYTES: Final = 512
# zlib's fastest level. On real shell output level 6 left about 10 % fewer bytes, but took
# 1.7 times as long, and ten times as long on the worst text (random letters of a small
# alphabet: 21 ms for 256 KiB against 2 ms), and a caller chooses its text.
LEVEL: Final = 1


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as its row holds it: the text, or "" and the text deflated."""

    text: str
    packed: bytes | None
    text_bytes: int


class UnpackError(ValueError):
    """A packed chunk that does not inflate to the size its row records."""


def pack(text: str) -> StoredChunk:
    """`text` as its row should hold it."""
    raw = text.encode("utf-8")
    if len(raw) >= PACK_FROM_BYTES:
        packed = zlib.compress(raw, LEVEL)
        if len(packed) <= len(raw) - len(raw) // 8:
            return StoredChunk("", packed, len(raw))
    return StoredChunk(text, None, len(raw))


def unpack(text: str, packed: bytes | None, text_bytes: int | None) -> str:
    """The text a row holds (`pack`'s input). Inflating stops at the recorded size, so a
    damaged row costs no more memory than an intact one."""
    if packed is None:
        return text
    # zlib reads a limit of 0 as none at all; no packed row is that small.
    if text_bytes is None or text_bytes < PACK_FROM_BYTES:
        raise UnpackError(f"a packed output chunk records {text_bytes} bytes")
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, text_bytes)
    except zlib.error as error:
        raise UnpackError(f"a packed output chunk does not inflate: {error}") from error
    if (len(raw) != text_bytes or not inflater.eof or inflater.unconsumed_tail
            or inflater.unused_data):
        raise UnpackError(f"a packed output chunk does not inflate to its {text_bytes} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnpackError(f"a packed output chunk is not UTF-8: {error}") from error

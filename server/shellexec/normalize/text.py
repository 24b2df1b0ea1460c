"""Bounded, valid UTF-8 output text: the one place where size and encoding are enforced.

Every output field keeps at most `MAX_FIELD_BYTES` bytes of UTF-8, the *newest* ones, cut on a
character boundary (the ACP terminal rule: drop from the beginning); `bounded_head` keeps the
*oldest* ones instead, for a command, title or chat message. Text that cannot be UTF-8
(lone surrogates that `json.loads` lets through) becomes U+FFFD instead of failing later.

`OutputText` is the immutable buffer of one stream. Appending a delta costs time in proportion
to the delta, not to the text already held: versions share one append-only chunk list, and the
text is joined only when someone reads it (then cached).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Final

from shellexec.normalize.vocabulary import MAX_FIELD_BYTES
from shellexec.rules.limits import MAX_STORED_TEXT_BYTES

_SURROGATE = re.compile("[\ud800-\udfff]")
_REPLACEMENT: Final = "\ufffd"

# A version's chunks may hold this many bytes (retained or already cut off) before they are
# rewritten as one chunk. Twice the bound makes the rewrite happen at most once per
# MAX_FIELD_BYTES appended, so its cost spreads to O(1) per appended byte.
_COMPACT_BYTES: Final = 2 * MAX_FIELD_BYTES
# Many tiny deltas make reading slow (one join over every chunk); rewrite past this count.
_COMPACT_CHUNKS: Final = 4096

# One chunk: (offset where it ends in its list's byte space, its UTF-8 bytes).
_Chunk = tuple[int, bytes]


def to_utf8(text: str) -> tuple[str, bytes]:
    """`text` with lone surrogates replaced by U+FFFD, and its UTF-8 encoding."""
    try:
        return text, text.encode("utf-8")
    except UnicodeEncodeError:
        clean = _SURROGATE.sub(_REPLACEMENT, text)
        return clean, clean.encode("utf-8")


def valid_text(text: str) -> str:
    """`text` made encodable as UTF-8 (lone surrogates become U+FFFD)."""
    return to_utf8(text)[0]


def is_continuation(byte: int) -> bool:
    """Whether `byte` continues a UTF-8 character (0b10xxxxxx)."""
    return 0x80 <= byte < 0xC0


def tail_bytes(data: bytes, limit: int = MAX_FIELD_BYTES) -> bytes:
    """The newest `<= limit` bytes of valid UTF-8 `data`, starting on a character boundary."""
    if len(data) <= limit:
        return data
    start = len(data) - limit
    while start < len(data) and is_continuation(data[start]):
        start += 1
    return data[start:]


def bound_tail(text: str) -> tuple[str, bool]:
    """Keep the newest `<= MAX_FIELD_BYTES` bytes of `text` as valid UTF-8.

    The cut falls on a character boundary, so slightly fewer bytes than the bound may remain.
    Returns the kept text and whether anything was cut off.
    """
    clean, data = to_utf8(text)
    if len(data) <= MAX_FIELD_BYTES:
        return clean, False
    return tail_bytes(data).decode("utf-8"), True


def bounded_head(text: str) -> str:
    """At most `MAX_STORED_TEXT_BYTES` of UTF-8, keeping the beginning: a command, title or chat
    message reads from its start (output streams keep their end instead, `bound_tail`)."""
    if len(text) * 4 <= MAX_STORED_TEXT_BYTES:  # no character is longer than 4 bytes
        return text
    data = text.encode("utf-8", "replace")
    if len(data) <= MAX_STORED_TEXT_BYTES:
        return text
    return data[:MAX_STORED_TEXT_BYTES].decode("utf-8", "ignore")


def _chunk_end(chunk: _Chunk) -> int:
    return chunk[0]


class OutputText:
    """The retained text of one output stream: immutable, bounded, valid UTF-8.

    - `text`: at most `MAX_FIELD_BYTES` bytes once encoded, the newest text kept;
    - `byte_count`: the exact UTF-8 length of `text`, in O(1);
    - `truncated`: whether older text was cut off to respect the bound;
    - `total_bytes`: how many bytes the stream has held in all, cut-off ones included.

    `append` returns a new value and leaves this one as it was. Values compare equal when they
    hold the same text, truncation flag and total.
    """

    __slots__ = ("_base", "_chunks", "_count", "_cut", "_origin", "_text", "_truncated")

    def __init__(
        self,
        chunks: list[_Chunk],
        count: int,
        base: int,
        cut: int,
        truncated: bool,
        text: str | None = None,
    ) -> None:
        # `chunks` may be shared with other versions and grow after this one was made: this
        # version only ever reads `chunks[:count]`, which never changes once written.
        self._chunks = chunks
        self._count = count
        self._base = base  # bytes the stream held before chunks[0] (all cut off)
        self._cut = cut  # where the retained text starts, in the chunks' byte space
        self._truncated = truncated
        self._text = text  # cache of the joined text
        # Set on a version that rewrote its buffer while appending: the version it grew from
        # (its chunk list and count) and the appended bytes, so that the append is still
        # told as one (`appended_since`) and a store need not rewrite the body.
        self._origin: tuple[list[_Chunk], int, bytes] | None = None

    @classmethod
    def of(cls, text: str, *, truncated: bool = False, total_bytes: int = 0) -> OutputText:
        """A stream holding `text`, bounded to its newest `MAX_FIELD_BYTES` bytes.

        `truncated` and `total_bytes` restore what a stored stream knew about text it had
        already cut off; `total_bytes` smaller than the text's own size is ignored.
        """
        clean, data = to_utf8(text)
        kept = tail_bytes(data)
        retained = clean if kept is data else kept.decode("utf-8")
        base = max(total_bytes, len(data)) - len(kept)
        chunks: list[_Chunk] = [(len(kept), kept)] if kept else []
        cut_off = truncated or len(kept) < len(data)
        return cls(chunks, len(chunks), base, 0, cut_off, retained)

    @property
    def text(self) -> str:
        """The retained text (joined on first read, then cached)."""
        if self._text is None:
            self._text = self._retained_bytes().decode("utf-8", "replace")
        return self._text

    @property
    def byte_count(self) -> int:
        """The UTF-8 length of `text` in bytes."""
        return self._end() - self._cut

    @property
    def truncated(self) -> bool:
        """Whether older text was cut off to keep the stream within the bound."""
        return self._truncated

    @property
    def total_bytes(self) -> int:
        """Bytes the stream has held in all, including those cut off."""
        return self._base + self._end()

    def append(self, delta: str) -> OutputText:
        """This stream followed by `delta`, bounded; costs O(len(delta)) amortized."""
        if not delta:
            return self
        _, data = to_utf8(delta)
        if len(data) > MAX_FIELD_BYTES:
            # The delta alone fills the bound: nothing held before survives.
            kept = tail_bytes(data)
            total = self.total_bytes + len(data)
            return OutputText([(len(kept), kept)], 1, total - len(kept), 0, True)
        chunks = self._with_chunk(data)
        end = self._end() + len(data)
        cut = self._cut
        if end - cut > MAX_FIELD_BYTES:
            cut = _boundary_at(chunks, self._count + 1, end - MAX_FIELD_BYTES)
        grown = OutputText(chunks, self._count + 1, self._base, cut, self._truncated or cut > 0)
        if not grown._needs_compaction():
            return grown
        compacted = grown._compacted()
        compacted._origin = (self._chunks, self._count, data)
        return compacted

    def tail(self, limit: int) -> str:
        """The newest `<= limit` bytes of the retained text, in O(limit): the context a delta
        continues (a partial character at the cut is dropped)."""
        pieces: list[bytes] = []
        size = 0
        index = self._count - 1
        while index >= 0 and size < limit:
            data = self._chunks[index][1]
            pieces.append(data)
            size += len(data)
            index -= 1
        joined = b"".join(reversed(pieces))
        return joined[-min(limit, self.byte_count):].decode("utf-8", "ignore") if joined else ""

    def appended_since(self, older: OutputText) -> str | None:
        """The text appended to `older` to make this stream, or None if it was not made so.

        Answers in O(len(appended text)): it only looks at chunks this version added.
        """
        origin = self._origin
        if origin is not None and origin[0] is older._chunks and origin[1] == older._count:
            return origin[2].decode("utf-8", "replace")
        if older._chunks is not self._chunks or older._count > self._count:
            return None
        added = b"".join(chunk for _, chunk in self._chunks[older._count : self._count])
        return added.decode("utf-8", "replace")

    def extension_of(self, snapshot: str) -> str | None:
        """What `snapshot` adds after this stream, if `snapshot` begins with the whole stream.

        For a truncated stream only the retained bytes can be compared: they must sit at the
        same offset in `snapshot`. None when `snapshot` does not extend the stream.
        """
        _, data = to_utf8(snapshot)
        total = self.total_bytes
        if len(data) < total:
            return None
        if not data.startswith(self._retained_bytes(), total - self.byte_count):
            return None
        return data[total:].decode("utf-8", "replace")

    def _end(self) -> int:
        return self._chunks[self._count - 1][0] if self._count else 0

    def _with_chunk(self, data: bytes) -> list[_Chunk]:
        """The chunk list with `data` added at this version's end, shared when possible."""
        chunk = (self._end() + len(data), data)
        chunks = self._chunks
        if len(chunks) == self._count:
            chunks.append(chunk)
            if chunks[self._count] is chunk:
                return chunks
        # Another version already grew this list past our end (or won a race to): branch.
        return [*chunks[: self._count], chunk]

    def _retained_bytes(self) -> bytes:
        if self._cut >= self._end():
            return b""
        first = bisect_right(self._chunks, self._cut, hi=self._count, key=_chunk_end)
        end, data = self._chunks[first]
        skip = self._cut - (end - len(data))
        rest = (chunk for _, chunk in self._chunks[first + 1 : self._count])
        return b"".join((memoryview(data)[skip:], *rest))

    def _needs_compaction(self) -> bool:
        return self._end() > _COMPACT_BYTES or self._count > _COMPACT_CHUNKS

    def _compacted(self) -> OutputText:
        kept = self._retained_bytes()
        chunks: list[_Chunk] = [(len(kept), kept)] if kept else []
        base = self.total_bytes - len(kept)
        return OutputText(chunks, len(chunks), base, 0, self._truncated)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OutputText):
            return NotImplemented
        return (
            self.byte_count == other.byte_count
            and self._truncated == other._truncated
            and self.total_bytes == other.total_bytes
            and (self is other or self.text == other.text)
        )

    def __hash__(self) -> int:
        return hash((self.text, self._truncated, self.total_bytes))

    def __repr__(self) -> str:
        head = self.text[:40] + ("..." if self.byte_count > 40 else "")
        return f"OutputText({head!r}, bytes={self.byte_count}, truncated={self._truncated})"


def _boundary_at(chunks: list[_Chunk], count: int, offset: int) -> int:
    """The first character boundary at or after byte `offset` of `chunks[:count]`."""
    index = bisect_right(chunks, offset, hi=count, key=_chunk_end)
    end, data = chunks[index]
    local = offset - (end - len(data))
    # Chunks are whole characters, so a boundary is always found inside this chunk or at its end.
    while local < len(data) and is_continuation(data[local]):
        local += 1
    return end - len(data) + local

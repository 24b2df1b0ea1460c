"""The output a hosted terminal keeps for the agent: ACP's `outputByteLimit`.

ACP: once the output exceeds the limit, earlier output is dropped so that the newest bytes
stay within it, and the cut falls on a character boundary (the kept text starts with a whole
UTF-8 character, so it may hold up to 3 bytes fewer than the limit). `truncated` says a cut
happened. Without a limit the bridge still keeps at most `MAX_WINDOW_BYTES`, so an agent
cannot make it hold unbounded output; and all the terminals' windows together at most
`MAX_WINDOWS_BYTES`: each is held to its share of it (`limit_to`), however large the limit
asked.

Output that is not UTF-8 is shown with U+FFFD for each byte that is not, three bytes for one:
the text answered is held to the limit as UTF-8 too (1,000 bytes of 0xFF answered 3,000), and a
run of stray continuation bytes is no character to skip past (a cut looking for a start in
100 KB of 0x80 kept nothing).
"""

from __future__ import annotations

import codecs

from shellexec.normalize.text import is_continuation

MAX_WINDOW_BYTES = 16 * 1024 * 1024
# What all of a bridge's terminal windows may keep together: 64 terminals (the most it hosts)
# of 16 MiB each held over 1 GiB (1.3-1.4 GB measured with 64 running `yes`).
MAX_WINDOWS_BYTES = 64 * 1024 * 1024


# A UTF-8 character continues for at most three bytes after its first.
_MAX_CONTINUATION = 3


def _start_after(data: bytes | bytearray, cut: int) -> int:
    """`cut`, moved past the continuation bytes of a character it would split (at most
    three: more are no character, and are kept to be shown as U+FFFD)."""
    start = cut
    while start < len(data) and start - cut < _MAX_CONTINUATION and is_continuation(data[start]):
        start += 1
    return start


class OutputWindow:
    """The newest bytes of an output, at most `limit` of them, cut on a character start."""

    def __init__(self, limit: int | None) -> None:
        self._limit = MAX_WINDOW_BYTES if limit is None else min(max(limit, 0), MAX_WINDOW_BYTES)
        self._data = bytearray()
        self.truncated = False

    def append(self, data: bytes) -> None:
        self._data += data
        self._cut()

    def limit_to(self, share: int) -> None:
        """Keeps at most `share` bytes from now on (never more than before), cutting what is
        over it now."""
        if share < self._limit:
            self._limit = max(share, 0)
            self._cut()

    def _cut(self) -> None:
        if len(self._data) <= self._limit:
            return
        del self._data[:_start_after(self._data, len(self._data) - self._limit)]
        self.truncated = True

    def data(self) -> bytes:
        return bytes(self._data)

    def text(self, *, complete: bool) -> tuple[str, bool]:
        """The kept output as text, within the limit as UTF-8, and whether anything was cut.
        Until the output is `complete`, a character whose last bytes have not arrived yet is
        left out rather than shown broken."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(bytes(self._data), final=complete)
        if len(text) <= self._limit // 4 or "\ufffd" not in text:
            return text, self.truncated  # fits whatever its characters, or is the bytes kept
        encoded = text.encode("utf-8", "surrogatepass")
        if len(encoded) <= self._limit:
            return text, self.truncated
        kept = encoded[_start_after(encoded, len(encoded) - self._limit):]
        return kept.decode("utf-8", "surrogatepass"), True

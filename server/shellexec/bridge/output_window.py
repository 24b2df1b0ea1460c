"""The output a hosted terminal keeps for the agent: ACP's `outputByteLimit`.

ACP: once the output exceeds the limit, earlier output is dropped so that the newest bytes
stay within it, and the cut falls on a character boundary (the kept text starts with a whole
UTF-8 character, so it may hold up to 3 bytes fewer than the limit). `truncated` says a cut
happened. Without a limit the bridge still keeps at most `MAX_WINDOW_BYTES`, so an agent
cannot make it hold unbounded output.
"""

from __future__ import annotations

import codecs

MAX_WINDOW_BYTES = 16 * 1024 * 1024


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


class OutputWindow:
    """The newest bytes of an output, at most `limit` of them, cut on a character start."""

    def __init__(self, limit: int | None) -> None:
        self._limit = MAX_WINDOW_BYTES if limit is None else min(max(limit, 0), MAX_WINDOW_BYTES)
        self._data = bytearray()
        self.truncated = False

    def append(self, data: bytes) -> None:
        self._data += data
        if len(self._data) <= self._limit:
            return
        cut = len(self._data) - self._limit
        while cut < len(self._data) and _continuation(self._data[cut]):
            cut += 1
        del self._data[:cut]
        self.truncated = True

    def data(self) -> bytes:
        return bytes(self._data)

    def text(self, *, complete: bool) -> str:
        """The kept output as text. Until the output is `complete`, a character whose last
        bytes have not arrived yet is left out rather than shown broken."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        return decoder.decode(bytes(self._data), final=complete)

"""The lines of a text that `fs/read_text_file` answers, taken from the text as it streams by.

A read asks for `limit` lines from the 1-based `line`; the bridge stops reading once it has
them, keeps nothing of the lines before, and gives up once the answer would hold more than
its cap (ADR 0122). A line ends with `\n`, as `sed -n 2p` and an editor's line numbers count
them: `str.splitlines` also ended lines at a form feed, a vertical tab, U+2028 and others, and
a C file with a form feed was read a line off. The text comes as the file holds it (`\r\n`
kept), so a `\r` stays with its line.
"""

from __future__ import annotations

from typing import Final

_MIB: Final = 1024 * 1024

# The most one `fs/read_text_file` answer may hold, in bytes of UTF-8: the frame cap of
# `frames.MAX_FRAME_BYTES`, so the bridge never sends the agent more than it would take.
MAX_READ_BYTES: Final = 16 * _MIB


class WindowTooLargeError(Exception):
    """The lines asked for hold more than the cap."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"the lines asked for hold more than {cap} bytes; ask for fewer "
                         "with `line` and `limit`")
        self.cap = cap


class LineWindow:
    """Collects the lines [line, line + limit) of the text fed to it, chunk by chunk."""

    def __init__(self, line: int | None, limit: int | None, cap: int = MAX_READ_BYTES) -> None:
        self._first = max((line or 1) - 1, 0)
        self._end = None if limit is None else self._first + limit
        self._cap = cap
        self._line = 0  # the index of the line the next text belongs to
        self._kept: list[str] = []
        self._bytes = 0

    @property
    def complete(self) -> bool:
        """Whether every line asked for is in: nothing more needs to be read."""
        return self._end is not None and self._line >= self._end

    def feed(self, text: str) -> None:
        """The next chunk of the text; raises WindowTooLargeError past the cap."""
        if self._line < self._first:
            newlines = text.count("\n")
            if self._line + newlines < self._first:  # the whole chunk lies before the window
                self._line += newlines
                return
        start = 0
        while start < len(text) and not self.complete:
            end = text.find("\n", start) + 1 or len(text)
            if self._line >= self._first:
                self._keep(text[start:end])
            if text[end - 1] == "\n":  # else the line goes on in the next chunk
                self._line += 1
            start = end

    def text(self) -> str:
        """The lines collected."""
        return "".join(self._kept)

    def _keep(self, piece: str) -> None:
        self._bytes += len(piece) if piece.isascii() else len(piece.encode("utf-8",
                                                                           "surrogatepass"))
        if self._bytes > self._cap:
            raise WindowTooLargeError(self._cap)
        self._kept.append(piece)

"""Terminal output as the page shows it, and the way back to the stored text (pure, no I/O).

Masking searches both (ADR 0126): `grep --color` wraps a match in colour codes, which split
a credential for the patterns while the page joins it back. A span found in the shown text is
mapped back to one stretch of the stored text, and masked there but for the sequences the
page does not show, so a line of a hundred thousand escapes costs one pass to build and a
few slices to mask (ADR 0142).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

# A span of a text: (start, end) offsets.
Span = tuple[int, int]

# What the page does not show (web/ansi.js), as far as masking needs: CSI sequences (7- and
# 8-bit; the page acts on erases and column moves, which only hide or move text; a malformed
# one runs to its final byte, and any other character ends one and is shown), OSC strings
# to BEL or ST, or to the end of their line when never terminated (the page shows the lines
# after it), DCS/SOS/PM/APC strings to ST, the other escapes (intermediates and one final
# byte; an ESC followed by anything else is hidden alone, and what follows it is shown) and
# every control character but tab, line feed and carriage return. A backspace overstrikes (see
# `shown_text`). Every alternative begins with the control character that introduces it and
# a lookbehind says which one that was: a pattern that begins with one character class is
# searched for that class first, so a long text with few controls is scanned quickly.
_CONTROLS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_INVISIBLE = re.compile(
    rf"[{_CONTROLS}]"
    r"(?:(?<=\x1b)(?:\[[ -?]*[@-~]?"
    r"|\][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|[ -/]*[0-~]|[ -/]+\Z)"
    r"|(?<=\x9b)[ -?]*[@-~]?"
    r"|(?<=\x9d)[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?<=[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?)?")


def outside(spans: Iterable[Span], cover: Sequence[Span],
            cover_starts: Sequence[int]) -> Iterator[Span]:
    """The parts of `spans` that no span of `cover` holds. `cover` is sorted and disjoint,
    and `cover_starts` holds its starts."""
    for start, end in spans:
        index = max(bisect_right(cover_starts, start) - 1, 0)
        position = start
        while index < len(cover) and cover[index][0] < end:
            covered_start, covered_end = cover[index]
            if covered_start > position:
                yield position, covered_start
            position = max(position, covered_end)
            index += 1
        if position < end:
            yield position, end


@dataclass(frozen=True, slots=True)
class ShownText:
    """A text as a terminal shows it (`text`), and where it came from in the stored text.

    Each stretch of shown characters starts at `shown_starts[i]` in `text` and at
    `stored_starts[i]` in the stored text. `overwritten` names, for a stored character put
    over another by backspace overstrike, where that other is; a chain (`a\\bb\\bc`) is
    followed link by link (ADR 0141). `hidden` holds the stored text's sequences the page
    does not show, in order. Every stored character is in one stretch, in `hidden`, or
    written over.
    """

    text: str
    shown_starts: tuple[int, ...]
    stored_starts: tuple[int, ...]
    overwritten: dict[int, int]
    hidden: tuple[Span, ...]
    hidden_starts: tuple[int, ...]

    def stored_span(self, span: Span) -> Span:
        """The stored stretch from the first character `span` covers in the shown text (or
        the first it was written over) to the last. Besides those, it holds only hidden
        sequences and characters that covered ones were written over, so masking it but its
        hidden sequences masks the covered characters and what they were written over."""
        start, end = span
        first = self._stored(start)
        while first in self.overwritten:
            first = self.overwritten[first]
        return first, self._stored(end - 1) + 1

    def unhidden(self, spans: Iterable[Span]) -> Iterator[Span]:
        """The parts of the stored text's `spans` outside its hidden sequences."""
        return outside(spans, self.hidden, self.hidden_starts)

    def _stored(self, shown: int) -> int:
        index = bisect_right(self.shown_starts, shown) - 1
        return self.stored_starts[index] + shown - self.shown_starts[index]


def shown_text(text: str) -> ShownText | None:
    """`text` without what a terminal does not show, or None when it holds nothing such.

    A backspace followed by a character on the same line is overstrike (`man` pages print
    bold as `c\\bc` and underlining as `_\\bc`): the page draws the second character over the
    first, so the first leaves the shown text too. Escape sequences may stand between the
    backspace and the second character; another backspace may not.
    """
    stretches = _Stretches(text)
    hidden: list[Span] = []
    stored = 0
    # Whether the last backspace puts the next shown character over the last one.
    striking = False
    for invisible in _INVISIBLE.finditer(text):
        start, stored_end = invisible.span()
        if start > stored:
            stretches.add(stored, start, striking)
            striking = False
        if text[start] == "\b":
            striking = stretches.ends_on_a_line()
        hidden.append((start, stored_end))
        stored = stored_end
    if not hidden:
        return None
    if stored < len(text):
        stretches.add(stored, len(text), striking)
    return stretches.shown(tuple(hidden))


class _Stretches:
    """The shown stretches of a text, as `shown_text` finds them in order."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._parts: list[str] = []
        self._shown_starts: list[int] = []
        self._stored_starts: list[int] = []
        self._overwritten: dict[int, int] = {}
        self._shown = 0

    def ends_on_a_line(self) -> bool:
        """Whether a character is shown so far and the last one is not a line end."""
        return bool(self._parts) and self._parts[-1][-1] not in "\r\n"

    def add(self, start: int, end: int, striking: bool) -> None:
        """Adds the stored `text[start:end]`; when `striking`, its first character is put over
        the last one shown, unless it is a line end."""
        if striking and self._text[start] not in "\r\n":
            last = self._parts[-1]
            self._overwritten[start] = self._stored_starts[-1] + len(last) - 1
            self._shown -= 1
            if len(last) > 1:
                self._parts[-1] = last[:-1]
            else:
                self._parts.pop()
                self._shown_starts.pop()
                self._stored_starts.pop()
        self._parts.append(self._text[start:end])
        self._shown_starts.append(self._shown)
        self._stored_starts.append(start)
        self._shown += end - start

    def shown(self, hidden: tuple[Span, ...]) -> ShownText:
        return ShownText("".join(self._parts), tuple(self._shown_starts),
                         tuple(self._stored_starts), self._overwritten, hidden,
                         tuple(start for start, _ in hidden))

"""The lines an `fs/read_text_file` answers, taken from the text chunk by chunk: the same lines
as slicing the whole text, without holding what lies before or after them."""

from __future__ import annotations

import itertools

import pytest

from shellexec.bridge.line_window import LineWindow, WindowTooLargeError

# Only \n ends a line, as `sed -n Np` counts: not \r, a form feed, \v or U+2028, at which
# `str.splitlines` also ended one.
TEXT = "one\r\ntwo\n\nfour\x0bfive\u2028six\f\nseven\rstill seven\n\x85eight"


def _whole(text: str, line: int | None, limit: int | None) -> str:
    """The lines of the whole text, each ending with its \n."""
    if line is None and limit is None:
        return text
    lines = text.replace("\n", "\n\0").split("\0")
    start = max((line or 1) - 1, 0)
    return "".join(lines[start:None if limit is None else start + limit])


def _windowed(text: str, line: int | None, limit: int | None, size: int) -> str:
    window = LineWindow(line, limit)
    for start in range(0, len(text), size):
        if window.complete:
            break
        window.feed(text[start:start + size])
    return window.text()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_the_lines_are_those_of_the_whole_text_whatever_the_chunks(size: int) -> None:
    for line, limit in itertools.product([None, 0, 1, 2, 4, 7, 9], [None, 0, 1, 2, 3, 10]):
        assert _windowed(TEXT, line, limit, size) == _whole(TEXT, line, limit), (line, limit)


def test_a_line_is_what_sed_counts_as_one() -> None:
    source = "int a;\f\n/* page 2 */\nint b;\r\nint c;\u2028int d;\n"
    assert _windowed(source, 2, 1, 100) == "/* page 2 */\n"
    assert _windowed(source, 3, 1, 100) == "int b;\r\n"  # its \r\n as the file holds it
    assert _windowed(source, 4, 1, 3) == "int c;\u2028int d;\n"


def test_reading_stops_once_the_lines_are_in() -> None:
    window = LineWindow(2, 1)
    window.feed("one\ntw")
    assert not window.complete
    window.feed("o\nthree")
    assert window.complete
    assert window.text() == "two\n"


def test_lines_before_the_window_are_not_kept_however_long() -> None:
    window = LineWindow(2, None, cap=10)
    for _ in range(100):
        window.feed("x" * 100)  # one line of 10,000 characters: skipped, not held
    window.feed("\nlast\n")
    assert window.text() == "last\n"


def test_an_answer_over_the_cap_is_refused_counting_utf8_bytes() -> None:
    LineWindow(None, None, cap=4).feed("éé")  # 4 bytes: fits
    with pytest.raises(WindowTooLargeError, match="more than 4 bytes"):
        LineWindow(None, None, cap=4).feed("éé\n")
    window = LineWindow(None, None, cap=4)
    window.feed("ab")
    with pytest.raises(WindowTooLargeError):
        window.feed("cde")  # a line of 5 bytes, in two chunks

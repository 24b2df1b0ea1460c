"""ACP's `outputByteLimit`: the newest bytes, cut on a character boundary."""

from __future__ import annotations

from shellexec.bridge.output_window import MAX_WINDOW_BYTES, OutputWindow


def test_within_the_limit_nothing_is_cut() -> None:
    window = OutputWindow(10)
    window.append(b"hello")
    assert window.text(complete=True) == ("hello", False)


def test_the_newest_bytes_are_kept_from_a_character_start() -> None:
    window = OutputWindow(4)
    window.append("aé".encode() * 3)  # a é a é a é: 9 bytes
    # The newest 4 bytes start inside an é: the cut moves past it.
    assert window.text(complete=True) == ("aé", True)
    assert window.data() == "aé".encode()


def test_a_character_still_arriving_is_not_shown_broken() -> None:
    window = OutputWindow(None)
    window.append("x€".encode()[:3])
    assert window.text(complete=False) == ("x", False)
    assert window.text(complete=True) == ("x\ufffd", False)


def test_no_limit_is_still_bounded_and_zero_keeps_nothing() -> None:
    unbounded = OutputWindow(None)
    unbounded.append(b"a" * (MAX_WINDOW_BYTES + 1))
    assert (len(unbounded.data()), unbounded.truncated) == (MAX_WINDOW_BYTES, True)
    nothing = OutputWindow(0)
    nothing.append(b"abc")
    assert nothing.data() == b""


def test_output_that_is_not_utf8_is_answered_within_the_limit_as_utf8() -> None:
    # Each byte that is no UTF-8 is shown as U+FFFD, three bytes for one.
    window = OutputWindow(1000)
    window.append(b"\xff" * 100_000)
    text, truncated = window.text(complete=True)
    assert (text, truncated) == ("\ufffd" * 333, True)
    assert len(text.encode()) <= 1000


def test_a_run_of_stray_continuation_bytes_is_kept_not_skipped_whole() -> None:
    # Looking for a character start in 100 KB of 0x80 used to drop every byte.
    window = OutputWindow(1000)
    window.append(b"\x80" * 100_000 + b"end")
    text, truncated = window.text(complete=True)
    assert truncated
    assert text.endswith("\ufffdend")
    assert 0 < len(text.encode()) <= 1000

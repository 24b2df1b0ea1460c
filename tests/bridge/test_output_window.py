"""ACP's `outputByteLimit`: the newest bytes, cut on a character boundary."""

from __future__ import annotations

from shellexec.bridge.output_window import MAX_WINDOW_BYTES, OutputWindow


def test_within_the_limit_nothing_is_cut() -> None:
    window = OutputWindow(10)
    window.append(b"hello")
    assert (window.text(complete=True), window.truncated) == ("hello", False)


def test_the_newest_bytes_are_kept_from_a_character_start() -> None:
    window = OutputWindow(4)
    window.append("aé".encode() * 3)  # a é a é a é: 9 bytes
    # The newest 4 bytes start inside an é: the cut moves past it.
    assert (window.text(complete=True), window.truncated) == ("aé", True)
    assert window.data() == "aé".encode()


def test_a_character_still_arriving_is_not_shown_broken() -> None:
    window = OutputWindow(None)
    window.append("x€".encode()[:3])
    assert window.text(complete=False) == "x"
    assert window.text(complete=True) == "x\ufffd"


def test_no_limit_is_still_bounded_and_zero_keeps_nothing() -> None:
    unbounded = OutputWindow(None)
    unbounded.append(b"a" * (MAX_WINDOW_BYTES + 1))
    assert (len(unbounded.data()), unbounded.truncated) == (MAX_WINDOW_BYTES, True)
    nothing = OutputWindow(0)
    nothing.append(b"abc")
    assert nothing.data() == b""

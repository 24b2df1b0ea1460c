"""ACP's `outputByteLimit`: the newest bytes, cut on a character boundary."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from shellexec.bridge import terminals
from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.output_window import MAX_WINDOW_BYTES, OutputWindow
from shellexec.bridge.terminals import TerminalHost


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


def test_a_window_held_to_a_share_cuts_what_is_over_it_and_never_grows_back() -> None:
    window = OutputWindow(100)
    window.append(b"a" * 80)
    window.limit_to(50)
    assert (len(window.data()), window.truncated) == (50, True)
    window.limit_to(90)  # a larger share later keeps the smaller bound
    window.append(b"b" * 30)
    assert window.data() == b"a" * 20 + b"b" * 30


def test_the_terminals_windows_together_keep_at_most_their_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each terminal kept up to 16 MiB for the agent, so 64 of them (the most the bridge
    hosts) running `yes` held 1.3-1.4 GB (a probe). Here the bound is 4,000 bytes, and four
    terminals print 3,000 each: the first, alone at first, kept everything before the others
    came; each is then held to its share, 1,000."""
    monkeypatch.setattr(terminals, "MAX_WINDOWS_BYTES", 4_000)

    async def scenario() -> list[tuple[str, bool]]:
        host = TerminalHost(tmp_path, dict(os.environ), 60, lambda update: None, OpenCalls())
        first = await host.create("head -c 3000 /dev/zero | tr '\\0' a", None, None, None,
                                  None)
        await host.wait_for_exit(first)
        ids = [first]
        for letter in "bcd":
            ids.append(await host.create(f"head -c 3000 /dev/zero | tr '\\0' {letter}",
                                         None, None, None, None))
        for terminal_id in ids:
            await host.wait_for_exit(terminal_id)
            for _ in range(3_000):  # the output is read on briefly after the exit
                if len(host.output(terminal_id)[0]) == 1_000:
                    break
                await asyncio.sleep(0.01)
        answers = [host.output(terminal_id)[:2] for terminal_id in ids]
        await host.stop_all()
        return answers

    answers = asyncio.run(scenario())
    assert answers == [(letter * 1_000, True) for letter in "abcd"]

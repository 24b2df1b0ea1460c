"""A hosted terminal's command runs under a guard (ADR 0136): `terminal/kill` and
`terminal/release` end everything the command started, background jobs and processes that
left its process group with `setsid` included, while `terminal/wait_for_exit` still answers
when the shell exits; a command that ended leaves no guard behind; and the command gets
SIGPIPE as a shell in a terminal does."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge.harness import Launched, launch
from bridge.test_terminals import answers, create, run, shell_message, tool_call, tool_update

from support.processes import gone, running, wait_until
from support.stack import Stack

pytestmark = pytest.mark.slow

# Bounds of the waits below: each ends as soon as its condition holds.
GONE_SECONDS = 10.0
MARK_SECONDS = 30.0
# Longer than any test here runs: a sleep still there at the end was not ended.
SLEEP = 300


def _pids(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()]


@contextlib.contextmanager
def _cleaned_up(pid_file: Path) -> Iterator[None]:
    """Kills what a failed test left running of the sleeps it started, and only those."""
    try:
        yield
    finally:
        for pid in _pids(pid_file) if pid_file.exists() else []:
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                    os.kill(pid, signal.SIGKILL)


def _started(pid_file: Path) -> str:
    """A command line that starts a background job, a `setsid` one writing to the terminal and
    a `setsid` one writing elsewhere, writes their pids and its own, then sleeps itself."""
    return (f"sleep {SLEEP} & a=$!; setsid sleep {SLEEP} & b=$!; "
            f"setsid sleep {SLEEP} >/dev/null 2>&1 & c=$!; echo started; "
            f"echo $a $b $c $$ > {pid_file}.partial; mv {pid_file}.partial {pid_file}; "
            f"exec sleep {SLEEP}")


def _go(launched: Launched, mark: str, go: Path) -> None:
    launched.wait_for_mark(mark, MARK_SECONDS)
    go.touch()


def test_kill_ends_what_the_command_started_outside_its_process_group(
        stack: Stack, tmp_path: Path) -> None:
    pid_file, go = tmp_path / "pids", tmp_path / "go"
    launched = launch(stack, tmp_path, [
        tool_call("c1", "serve"), create(_started(pid_file)),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"wait_for_file": str(pid_file)},
        {"terminal_kill": "t1"}, {"terminal_wait": "t1"}, {"mark": "killed"},
        {"wait_for_file": str(go)},
        {"terminal_output": "t1"}, {"terminal_release": "t1"},
        tool_update("c1", status="failed"),
    ], "--host-terminals", "--agent", "goose", "--prompt", "Run it.")
    with _cleaned_up(pid_file):
        launched.wait_for_mark("killed", MARK_SECONDS)
        left = [pid for pid in _pids(pid_file)
                if not wait_until(functools.partial(gone, pid), GONE_SECONDS)]
        go.touch()
        finished = launched.finish()

        assert left == [], "still running after terminal/kill"
        assert finished.code == 0, finished.stderr
        assert answers(finished, "terminal_wait")[0]["signal"] == "SIGKILL"
        assert answers(finished, "terminal_output")[0]["output"] == "started\n"


def test_wait_answers_when_the_shell_exits_and_release_ends_what_it_left_running(
        stack: Stack, tmp_path: Path) -> None:
    pid_file, go, released = tmp_path / "pids", tmp_path / "go", tmp_path / "released"
    line = (f"setsid sleep {SLEEP} & echo $! > {pid_file}.partial; "
            f"mv {pid_file}.partial {pid_file}; echo leaving; exit 3")
    launched = launch(stack, tmp_path, [
        tool_call("c1", "daemon"), create(line),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"terminal_wait": "t1"}, {"mark": "exited"}, {"wait_for_file": str(go)},
        {"terminal_release": "t1"}, {"mark": "released"}, {"wait_for_file": str(released)},
        tool_update("c1", status="failed"),
    ], "--host-terminals", "--agent", "goose", "--prompt", "Run it.")
    with _cleaned_up(pid_file):
        launched.wait_for_mark("exited", MARK_SECONDS)
        [daemon] = _pids(pid_file)
        running_after_the_shell = not gone(daemon)
        go.touch()
        launched.wait_for_mark("released", MARK_SECONDS)
        ended_by_release = wait_until(lambda: gone(daemon), GONE_SECONDS)
        released.touch()
        finished = launched.finish()

        assert running_after_the_shell, "the command's setsid child ended with its shell"
        assert ended_by_release, "terminal/release left the command's setsid child running"
        assert finished.code == 0, finished.stderr
        assert answers(finished, "terminal_wait") == [{"step": "terminal_wait", "exitCode": 3,
                                                       "signal": None, "_meta": None}]
        _, shell = shell_message(stack, finished)
        assert shell["output"]["stdout"] == "leaving\n"


def test_a_command_that_ended_leaves_no_guard_behind(stack: Stack, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    go = tmp_path / "go"
    launched = launch(stack, tmp_path, [
        tool_call("c1", "quick"), create(f"sleep 0.1 & true {tag}"),
        {"terminal_wait": "t1"}, {"mark": "exited"}, {"wait_for_file": str(go)},
        {"terminal_release": "t1"}, tool_update("c1", status="completed"),
    ], "--host-terminals", "--agent", "goose", "--prompt", "Run it.")
    launched.wait_for_mark("exited", MARK_SECONDS)
    named = tag.encode()  # the guard's command line holds the shell's
    guard_ended = wait_until(lambda: not running(lambda found: named in found), GONE_SECONDS)
    go.touch()
    finished = launched.finish()

    assert guard_ended, "a guard stayed after its command and its background job ended"
    assert finished.code == 0, finished.stderr
    assert answers(finished, "terminal_wait")[0]["exitCode"] == 0


def test_the_command_gets_sigpipe_as_in_a_terminal(stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("c1", "head"), create('yes | head -n 1; echo "${PIPESTATUS[0]}"'),
        {"terminal_wait": "t1"}, {"terminal_output": "t1"}, {"terminal_release": "t1"},
        tool_update("c1", status="completed"),
    ])
    assert answers(finished, "terminal_output")[0]["output"] == "y\n141\n"

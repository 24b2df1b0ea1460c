"""A hosted terminal's command runs under a guard (ADR 0136): `terminal/kill` and
`terminal/release` end everything the command started, background jobs and processes that
left its process group with `setsid` included, while `terminal/wait_for_exit` still answers
when the shell exits, and what a background job prints after that is still read; a command
that ended leaves no guard behind; the command gets SIGPIPE as a shell in a terminal does; and
a command that kills or keeps stopping its guard (same user, so it may) is still ended with
everything it started."""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import signal
import socket
import sys
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


def _still_running(pid_file: Path) -> list[int]:
    """The processes of `pid_file` that have not ended within GONE_SECONDS each."""
    return [pid for pid in _pids(pid_file)
            if not wait_until(functools.partial(gone, pid), GONE_SECONDS)]


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
        left = _still_running(pid_file)
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


def _stderr_is_clean(stderr: str) -> None:
    """No traceback: asyncio's "Event loop is closed" one came from an output pipe left open
    and unread as the bridge exited."""
    assert "Traceback" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr


def test_a_background_job_printing_after_the_shell_exited_is_read_on(
        stack: Stack, tmp_path: Path) -> None:
    """The bridge read the output for 1 s after the shell exited and then stopped: a job
    printing later lost its output, and one printing more than the pipe holds blocked until
    release killed it; the pipe left unread also made asyncio print a traceback at exit."""
    go, printed = tmp_path / "go", tmp_path / "printed"
    line = (f"(while [ ! -e {go} ]; do sleep 0.05; done; "
            f"head -c 1000000 /dev/zero | tr '\\0' a; echo; echo late; touch {printed}) & "
            "echo early")
    launched = launch(stack, tmp_path, [
        tool_call("c1", "background"), create(line, outputByteLimit=100),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"terminal_wait": "t1"}, {"mark": "exited"}, {"wait_for_file": str(printed)},
        {"terminal_output": "t1"}, {"terminal_release": "t1"},
        tool_update("c1", status="completed"),
    ], "--host-terminals", "--agent", "goose", "--prompt", "Run it.")
    launched.wait_for_mark("exited", MARK_SECONDS)
    go.touch()  # the job prints now, once `terminal/wait_for_exit` answered
    job_finished = wait_until(printed.exists, MARK_SECONDS)
    finished = launched.finish()

    assert job_finished, "the background job blocked on a full output pipe"
    assert finished.code == 0, finished.stderr
    assert answers(finished, "terminal_wait")[0]["exitCode"] == 0
    output = answers(finished, "terminal_output")[0]
    assert (output["output"], output["truncated"]) == ("a" * 94 + "\nlate\n", True)
    _, shell = shell_message(stack, finished)
    assert shell["output"]["stdout"].endswith("aaa\nlate\n")
    assert shell["output"]["truncated"] is True
    _stderr_is_clean(finished.stderr)


def test_output_held_open_out_of_the_guard_s_reach_is_closed_at_release(
        stack: Stack, tmp_path: Path) -> None:
    """A process outside the command's tree and session may hold the output open (here the
    test itself, handed it over a Unix socket): release stops reading it and closes it, and
    the bridge exits without asyncio's traceback about a pipe it closed too late."""
    address = tmp_path / "socket"
    handing = ("import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
               "socket.send_fds(s, [b'x'], [1])")
    line = f"{shlex.quote(sys.executable)} -c {shlex.quote(handing)} {address}; echo handed"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(address))
        listener.listen(1)
        listener.settimeout(MARK_SECONDS)
        launched = launch(stack, tmp_path, [
            tool_call("c1", "hand over"), create(line),
            tool_update("c1", status="in_progress",
                        content=[{"type": "terminal", "terminalId": "@t1"}]),
            {"terminal_wait": "t1"}, {"terminal_output": "t1"}, {"terminal_release": "t1"},
            tool_update("c1", status="completed"),
        ], "--host-terminals", "--agent", "goose", "--prompt", "Run it.")
        connection, _ = listener.accept()
        with connection:
            _, held, _, _ = socket.recv_fds(connection, 1, 1)
        try:
            finished = launched.finish_unhung(MARK_SECONDS)
        finally:
            for fd in held:
                os.close(fd)

    assert finished.code == 0, finished.stderr
    assert answers(finished, "terminal_wait")[0]["exitCode"] == 0
    assert answers(finished, "terminal_output")[0]["output"] == "handed\n"
    _stderr_is_clean(finished.stderr)


@contextlib.contextmanager
def _rogue_cleaned_up(launched: Launched, pid_file: Path) -> Iterator[None]:
    """What a failed test left of a command that fights its guard: its shell (whose command
    line names `pid_file`) and its sleeps, killed by pid; the guard continued (it then ends,
    told by the bridge); the bridge killed."""
    try:
        yield
    finally:
        for pid in _pids(pid_file) if pid_file.exists() else []:
            with contextlib.suppress(OSError, IndexError, ValueError):
                found = Path(f"/proc/{pid}/cmdline").read_bytes()
                guard = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                if found.startswith(b"sleep\0") or str(pid_file).encode() in found:
                    os.kill(pid, signal.SIGKILL)
                    if b"terminal_guard.py" in Path(f"/proc/{guard}/cmdline").read_bytes():
                        os.kill(guard, signal.SIGCONT)
        if launched.process.poll() is None:
            launched.process.kill()
            launched.process.wait()


def test_a_command_that_kills_its_guard_is_ended_at_once(stack: Stack, tmp_path: Path) -> None:
    """A command killing its guard (`kill -KILL $PPID`) left everything it started with no
    guard: it ran on after release, and after the bridge exited, under init."""
    pid_file, go = tmp_path / "pids", tmp_path / "go"
    line = (f"sleep {SLEEP} & a=$!; setsid sleep {SLEEP} & b=$!; "
            f"echo $a $b $$ > {pid_file}.partial; mv {pid_file}.partial {pid_file}; "
            f"kill -KILL $PPID; exec sleep {SLEEP}")
    launched = launch(stack, tmp_path, [
        tool_call("c1", "rogue"), create(line),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"terminal_wait": "t1"}, {"mark": "exited"}, {"wait_for_file": str(go)},
        {"terminal_release": "t1"}, tool_update("c1", status="failed"),
    ], "--host-terminals", "--agent", "goose", "--prompt", "Run it.")
    with _rogue_cleaned_up(launched, pid_file):
        launched.wait_for_mark("exited", MARK_SECONDS)
        left = _still_running(pid_file)
        go.touch()
        finished = launched.finish()

        assert left == [], "still running after the command killed its guard"
        assert finished.code == 0, finished.stderr
        assert answers(finished, "terminal_wait")[0]["signal"] == "SIGKILL"
        assert "its guard ended by SIGKILL before the command" in finished.stderr
        _stderr_is_clean(finished.stderr)


def test_a_command_that_keeps_stopping_its_guard_is_still_ended(
        stack: Stack, tmp_path: Path) -> None:
    """A command stopping its guard again and again (`kill -STOP $PPID` in a loop) outran
    the SIGCONT the bridge sends: `terminal/kill` ended nothing, and release gave up on the
    guard after 5 s, leaving the loop and its background job running."""
    pid_file = tmp_path / "pids"
    line = (f"sleep {SLEEP} & echo $! $$ > {pid_file}.partial; "
            f"mv {pid_file}.partial {pid_file}; while :; do kill -STOP $PPID; done")
    launched = launch(stack, tmp_path, [
        tool_call("c1", "rogue"), create(line),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"wait_for_file": str(pid_file)},
        {"terminal_kill": "t1"}, {"terminal_wait": "t1"}, {"mark": "killed"},
        {"terminal_release": "t1"}, tool_update("c1", status="failed"),
    ], "--host-terminals", "--agent", "goose", "--prompt", "Run it.")
    with _rogue_cleaned_up(launched, pid_file):
        launched.wait_for_mark("killed", MARK_SECONDS)
        left = _still_running(pid_file)
        finished = launched.finish()

        assert left == [], "still running after terminal/kill"
        assert finished.code == 0, finished.stderr
        assert answers(finished, "terminal_wait")[0]["signal"] == "SIGKILL"
        assert "what was left in its session" not in finished.stderr  # the guard ended
        _stderr_is_clean(finished.stderr)

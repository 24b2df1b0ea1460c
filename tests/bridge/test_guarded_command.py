"""`GuardedCommand` on its own, with real processes (ADR 0136): the shell's return code while a
background job still runs, a signal reported as `subprocess` reports one, a guard that ends
before the shell started, a start cancelled before the guard said it was ready, a guard the
command stopped, a guard that says it is ready before the command can stop it (the shell's
process waits for the bridge's `go`), and a guard that does not end when told."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shellexec.bridge import guarded_command, terminal_guard
from shellexec.bridge.child_exit import UnreapedChild
from shellexec.bridge.guarded_command import GuardedCommand

from support.processes import gone

T = TypeVar("T")
SHELL = shutil.which("bash") or "/bin/sh"
# Bounds of the waits below: each ends as soon as what it waits for happened.
ENDED_SECONDS = 10.0


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_the_shell_exit_comes_while_its_background_job_runs_and_end_stops_that_job(
        tmp_path: Path) -> None:
    async def scenario() -> tuple[int, bytes, bool, int | None]:
        command = await GuardedCommand.start(
            SHELL, "sleep 300 & echo started; exit 7", tmp_path, os.environ)
        code = await command.shell_exit()
        output = await command.stdout.readline()
        still_guarded = command.guard.returncode is None
        command.end()
        await asyncio.wait_for(command.ended(), ENDED_SECONDS)
        return code, output, still_guarded, command.guard.returncode

    code, output, still_guarded, guard_code = _run(scenario())

    assert (code, output) == (7, b"started\n")
    assert still_guarded, "the guard left before the background job ended"
    assert guard_code == 0


def test_a_shell_ended_by_a_signal_reports_it_negative(tmp_path: Path) -> None:
    async def scenario() -> int:
        command = await GuardedCommand.start(SHELL, "kill -TERM $$", tmp_path, os.environ)
        code = await command.shell_exit()
        await asyncio.wait_for(command.ended(), ENDED_SECONDS)
        return code

    assert _run(scenario()) == -signal.SIGTERM


def test_a_guard_that_ends_before_the_shell_started_is_an_os_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = tmp_path / "failing_guard.py"
    failing.write_text("raise SystemExit(4)\n")
    monkeypatch.setattr(guarded_command, "_GUARD", str(failing))

    with pytest.raises(OSError, match=r"its guard ended before the shell started \(4\)"):
        _run(GuardedCommand.start(SHELL, "true", tmp_path, os.environ))


def test_a_start_cancelled_before_its_guard_is_ready_ends_the_guard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A guard that never says `ready`, and that SIGTERM ends as the real one's would.
    silent = tmp_path / "silent_guard.py"
    silent.write_text("import time\ntime.sleep(300)\n")
    monkeypatch.setattr(guarded_command, "_GUARD", str(silent))
    started: list[UnreapedChild] = []
    spawn = guarded_command.spawn_guard

    async def recording_spawn(*args: Any) -> UnreapedChild:
        guard = await spawn(*args)
        started.append(guard)
        return guard

    monkeypatch.setattr(guarded_command, "spawn_guard", recording_spawn)

    async def scenario() -> int:
        starting = asyncio.ensure_future(
            GuardedCommand.start(SHELL, "true", tmp_path, os.environ))
        while not started:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # waiting for `ready`, which never comes
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting
        await asyncio.wait_for(started[0].exited.wait(), ENDED_SECONDS)
        assert started[0].returncode is not None
        return started[0].returncode

    assert _run(scenario()) == -signal.SIGTERM


def test_a_guard_the_command_stopped_still_ends_it(tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, bool]:
        command = await GuardedCommand.start(
            SHELL, "sleep 300 & echo $!; kill -STOP $PPID; wait", tmp_path, os.environ)
        sleeper = int(await command.stdout.readline())
        while Path(f"/proc/{command.guard.pid}/stat").read_text().split()[2] != "T":
            await asyncio.sleep(0.01)
        command.end()
        ended_itself = await command.ended()
        await command.shell_exit()
        return ended_itself, gone(sleeper)

    assert _run(scenario()) == (True, True)


def test_the_guard_says_ready_before_the_shell_runs_the_command_line() -> None:
    # Written after the shell ran, `ready` could come too late: a command that began with
    # `kill -STOP $PPID` stopped the guard first, and the bridge waited for ever. Now the
    # guard says it with the shell's pid, and the shell's process waits for `go`.
    bridge, guard = socket.socketpair()
    try:
        os.set_inheritable(guard.fileno(), False)
        shell, told = terminal_guard.start_shell([SHELL, "-c", "exit 5"], guard.fileno())
    finally:
        guard.close()
    with bridge:
        said = bridge.recv(100)
        image_before_go = Path(f"/proc/{shell}/exe").resolve()
        group = os.getpgid(shell)
        bridge.sendall(terminal_guard.GO)
        code = os.waitstatus_to_exitcode(os.waitpid(shell, 0)[1])

    assert said == f"ready {shell}\n".encode()
    assert image_before_go == Path(sys.executable).resolve()  # not the shell yet
    assert group == shell
    assert code == 5
    assert not terminal_guard.ran_nothing(told)  # it became the shell


def test_without_go_the_shell_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    bridge, guard = socket.socketpair()
    try:
        os.set_inheritable(guard.fileno(), False)
        shell, told = terminal_guard.start_shell([SHELL, "-c", f"touch {marker}"],
                                                 guard.fileno())
    finally:
        guard.close()
    with bridge:
        bridge.recv(100)
        # As if the bridge went away (the forked process holds a copy of this end: a close
        # here would not end its wait).
        bridge.shutdown(socket.SHUT_WR)
        code = os.waitstatus_to_exitcode(os.waitpid(shell, 0)[1])

    assert (code, marker.exists()) == (1, False)
    assert terminal_guard.ran_nothing(told)  # its 1 is no command's code


def test_a_guard_that_does_not_end_is_killed_after_its_grace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stubborn = tmp_path / "stubborn_guard.py"
    stubborn.write_text("import os, signal, sys, time\n"
                        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                        "os.write(int(sys.argv[2]), f'ready {os.getpid()}\\n'.encode())\n"
                        "time.sleep(300)\n")
    monkeypatch.setattr(guarded_command, "_GUARD", str(stubborn))

    async def scenario() -> tuple[bool, int | None]:
        command = await GuardedCommand.start(SHELL, "true", tmp_path, os.environ)
        command.end()
        ended_itself = await command.ended(grace=0.5)
        await command.shell_exit()
        return ended_itself, command.guard.returncode

    assert _run(scenario()) == (False, -signal.SIGKILL)


def test_a_command_that_killed_its_guard_reports_the_guards_end_while_its_job_runs(
        tmp_path: Path) -> None:
    async def scenario() -> tuple[int, bool]:
        command = await GuardedCommand.start(
            SHELL, "sleep 300 & echo $!; kill -KILL $PPID; wait", tmp_path, os.environ)
        sleeper = int(await command.stdout.readline())
        try:
            code = await command.shell_exit()  # not held up by the sleep's open output
            return code, await command.ended()
        finally:
            os.kill(sleeper, signal.SIGKILL)
            await command.stdout.read()  # the output ends with the sleep

    assert _run(scenario()) == (-signal.SIGKILL, True)


def test_the_guards_children_read_from_every_process_are_the_kernels_list() -> None:
    """Where the kernel keeps no list of a process's children, the guard reads each
    process's parent instead: both ways find the same children. (The kernel lists a thread's
    children, so in this threaded test process its list may hold fewer than every child;
    the guard has one thread.)"""
    mine = [subprocess.Popen(["sleep", "300"]) for _ in range(3)]
    try:
        listed = set(terminal_guard.children())
        by_parent = set(terminal_guard.children_by_parent(os.getpid()))
    finally:
        for child in mine:
            child.kill()
            child.wait()

    assert {child.pid for child in mine} <= listed <= by_parent


# Run with SIGCHLD ignored, so that the kernel reaps the child at its exit: what the child's
# handle then does with its pid, as JSON.
_REAPED_BY_THE_KERNEL = r"""
import asyncio, json, os, signal
from shellexec.bridge.child_exit import spawn_unreaped

signal.signal(signal.SIGCHLD, signal.SIG_IGN)
signalled = []
kill = os.kill
os.kill = lambda pid, sig: (signalled.append(pid), kill(pid, sig))


async def main():
    child = await spawn_unreaped(["true"])
    await asyncio.wait_for(child.exited.wait(), 30)
    try:
        child.send_signal(signal.SIGTERM)
    except ProcessLookupError:
        pass
    child.let_go()
    child.close_pipes()
    return {"code": child.returncode, "holds": child.holds_its_pid, "signalled": signalled}


print(json.dumps(asyncio.run(main())))
"""


def test_a_child_reaped_by_another_is_never_signalled_or_waited_for_by_its_pid() -> None:
    """A child the kernel reaped (SIGCHLD ignored) has a pid that may be anyone's by now:
    its handle signalled it all the same, and waited for it by pid (blocking the loop until
    whichever child had it next ended)."""
    ran = subprocess.run([sys.executable, "-c", _REAPED_BY_THE_KERNEL], capture_output=True,
                         text=True, timeout=60, check=True)
    assert json.loads(ran.stdout) == {"code": 255, "holds": False, "signalled": []}

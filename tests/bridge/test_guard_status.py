"""Only the guard speaks on its status socket (ADR 0136): another process of the user that got
hold of the guard's end (in the instant before the guard is not dumpable: ptrace,
pidfd_getfd, or /proc/<pid>/fd while it was a pipe) made up `ready` and a return code 0, and
the bridge believed it; a made-up code also cancelled `--terminal-timeout`. And a guard that
another process traces runs nothing."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shellexec.bridge import guarded_command
from shellexec.bridge.child_exit import Watched
from shellexec.bridge.guarded_command import GuardedCommand

T = TypeVar("T")
SHELL = shutil.which("bash") or "/bin/sh"
ENDED_SECONDS = 10.0

# Writes argv[2] on the inherited fd argv[1], once the file argv[3] exists (at once without it).
_FORGER = """
import os, sys, time
if len(sys.argv) > 3:
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.02)
os.write(int(sys.argv[1]), sys.argv[2].encode())
if len(sys.argv) > 4:
    open(sys.argv[4], "w").close()
"""


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def _forging(monkeypatch: pytest.MonkeyPatch, *forger_argv: str, wait: bool) -> None:
    """Each guard started from now on has a forger holding its end of the status socket
    (as one that grabbed it would), started first; waited for if `wait`."""
    spawn = guarded_command.spawn_guard

    async def forging_spawn(argv: list[str], cwd: Path, env: Any, status_fd: int) -> Watched:
        forger = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _FORGER, str(status_fd), *forger_argv, pass_fds=(status_fd,))
        if wait:
            await forger.wait()
        return await spawn(argv, cwd, env, status_fd)

    monkeypatch.setattr(guarded_command, "spawn_guard", forging_spawn)


def test_a_ready_and_a_code_another_process_wrote_first_are_not_believed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _forging(monkeypatch, "ready 1\n0\n", wait=True)

    async def scenario() -> int:
        command = await GuardedCommand.start(SHELL, "exit 7", tmp_path, os.environ)
        code = await command.shell_exit()
        await asyncio.wait_for(command.ended(), ENDED_SECONDS)
        return code

    with caplog.at_level(logging.WARNING, logger="shellexec.bridge"):
        assert _run(scenario()) == 7
    assert "wrote on its status socket; not believed" in caplog.text


def test_a_code_another_process_writes_while_the_command_runs_is_not_believed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    go, forged = tmp_path / "go", tmp_path / "forged"
    _forging(monkeypatch, "0\n", str(go), str(forged), wait=False)

    async def scenario() -> int:
        command = await GuardedCommand.start(
            SHELL, f"while [ ! -e {forged} ]; do sleep 0.02; done; exit 7", tmp_path,
            os.environ)
        go.touch()  # the forger writes `0` now, before the shell exits
        code = await command.shell_exit()
        await asyncio.wait_for(command.ended(), ENDED_SECONDS)
        return code

    assert _run(scenario()) == 7


def test_the_status_socket_cannot_be_opened_through_proc(tmp_path: Path) -> None:
    """As root (or while the guard was still dumpable) /proc/<guard>/fd/<STATUS_FD> opened
    the status pipe for writing; a socket cannot be opened that way at all."""
    async def scenario() -> int | None:
        command = await GuardedCommand.start(SHELL, "exec sleep 300", tmp_path, os.environ)
        try:
            argv = Path(f"/proc/{command.guard.pid}/cmdline").read_bytes().split(b"\0")
            status_fd = int(argv[5])  # python -I -S terminal_guard.py BRIDGE_PID STATUS_FD
            os.close(os.open(f"/proc/{command.guard.pid}/fd/{status_fd}", os.O_WRONLY))
        except OSError as error:
            return error.errno
        finally:
            command.end()
            await asyncio.wait_for(command.ended(), ENDED_SECONDS)
            await command.shell_exit()
        return None

    # ENXIO: a socket; EACCES or EPERM: not root, and the guard is not dumpable.
    assert _run(scenario()) in (errno.ENXIO, errno.EACCES, errno.EPERM)


# Runs argv[1:] traced by this process (PTRACE_TRACEME), `{BRIDGE}` replaced by its own pid:
# the guard's parent must be the one it is told is the bridge. Exits with the traced
# program's code, or 99 if this system refuses ptrace.
_TRACING = """
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
child = os.fork()
if child == 0:
    if libc.ptrace(0, 0, None, None) != 0:
        os._exit(99)
    argv = [str(os.getppid()) if word == "{BRIDGE}" else word for word in sys.argv[1:]]
    os.execv(argv[0], argv)
while True:
    _, status = os.waitpid(child, 0)
    if not os.WIFSTOPPED(status):
        sys.exit(os.waitstatus_to_exitcode(status))
    number = os.WSTOPSIG(status)
    libc.ptrace(7, child, None, None if number == signal.SIGTRAP else number)  # PTRACE_CONT
"""


def test_a_traced_guard_runs_nothing(tmp_path: Path) -> None:
    """A process that ptrace-attached to the guard before it made itself not dumpable stays
    attached, and could write anything in the guard's name: such a guard ran the command."""
    marker = tmp_path / "ran"
    bridge, guard_end = socket.socketpair()
    with bridge, guard_end:
        traced = subprocess.run(
            [sys.executable, "-c", _TRACING, sys.executable, "-I", "-S", guarded_command._GUARD,
             "{BRIDGE}", str(guard_end.fileno()), SHELL, "-c", f"touch {marker}"],
            pass_fds=(guard_end.fileno(),), capture_output=True, timeout=60, check=False)
        guard_end.close()
        bridge.settimeout(10)
        said = bridge.recv(100)
    if traced.returncode == 99:
        pytest.skip("this system refuses ptrace")

    assert said == b""
    assert traced.returncode == 3, traced.stderr  # terminal_guard.TRACED
    assert b"traced by process" in traced.stdout + traced.stderr
    assert not marker.exists()

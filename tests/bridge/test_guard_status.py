"""Only the guard speaks on its status socket (ADR 0136): another process of the user that got
hold of the guard's end (in the instant before the guard is not dumpable: ptrace,
pidfd_getfd, or /proc/<pid>/fd while it was a pipe) made up `ready` and a return code 0, and
the bridge believed it; a made-up code also cancelled `--terminal-timeout`. And a guard that
another process traces runs nothing."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
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

from shellexec.bridge import guarded_command
from shellexec.bridge.child_exit import UnreapedChild
from shellexec.bridge.guarded_command import GuardedCommand

from support.processes import run_as_init

T = TypeVar("T")
SHELL = shutil.which("bash") or "/bin/sh"
ENDED_SECONDS = 10.0
# How long a test waits for an exit that a process holding the guard's end held up for ever.
HELD_SECONDS = 30.0

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


def _forging(monkeypatch: pytest.MonkeyPatch, *forger_argv: str, wait: bool
             ) -> list[asyncio.subprocess.Process]:
    """Each guard started from now on has a forger holding its end of the status socket
    (as one that grabbed it would), started first; waited for if `wait`. The forgers, as
    they start: a scenario waits for them before its loop ends (an exit its loop never saw
    left a transport that warned, unclosed, in a later test)."""
    spawn = guarded_command.spawn_guard
    forgers: list[asyncio.subprocess.Process] = []

    async def forging_spawn(argv: list[str], cwd: Path, env: Any, status_fd: int) -> UnreapedChild:
        forger = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _FORGER, str(status_fd), *forger_argv, pass_fds=(status_fd,))
        forgers.append(forger)
        if wait:
            await forger.wait()
        return await spawn(argv, cwd, env, status_fd)

    monkeypatch.setattr(guarded_command, "spawn_guard", forging_spawn)
    return forgers


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
    forgers = _forging(monkeypatch, "0\n", str(go), str(forged), wait=False)

    async def scenario() -> int:
        command = await GuardedCommand.start(
            SHELL, f"while [ ! -e {forged} ]; do sleep 0.02; done; exit 7", tmp_path,
            os.environ)
        go.touch()  # the forger writes `0` now, before the shell exits
        code = await command.shell_exit()
        await asyncio.wait_for(command.ended(), ENDED_SECONDS)
        for forger in forgers:
            await forger.wait()
        return code

    assert _run(scenario()) == 7


def test_what_the_guard_sends_is_believed_without_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    """The end of the socket carries no credentials: it was once taken for a message of
    an unknown process, with a warning after every command."""
    async def scenario() -> list[bytes]:
        ours, theirs = guarded_command.StatusChannel.pair()
        mine = os.pidfd_open(os.getpid())  # this process plays the guard
        try:
            inode = os.fstat(mine).st_ino
        finally:
            os.close(mine)
        status = guarded_command.StatusChannel(ours, os.getpid(), asyncio.Event(), inode)
        with theirs:
            theirs.sendall(b"ready 1\n")
            theirs.sendall(b"7\n")
        try:
            return [await status.readline() for _ in range(3)]
        finally:
            status.close()

    with caplog.at_level(logging.WARNING, logger="shellexec.bridge"):
        assert _run(scenario()) == [b"ready 1\n", b"7\n", b""]
    assert "not believed" not in caplog.text


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


# Holds the inherited fd argv[1] (a copy of the guard's end, as one that grabbed it would)
# until the file argv[2] exists, for at most two minutes.
_HOLDER = """
import os, sys, time
deadline = time.monotonic() + 120
while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.02)
"""


def _holding(monkeypatch: pytest.MonkeyPatch, released: Path
             ) -> list[asyncio.subprocess.Process]:
    """Each guard started from now on has a process holding a copy of its end of the status
    socket until `released` exists: those processes, as they start."""
    spawn = guarded_command.spawn_guard
    holders: list[asyncio.subprocess.Process] = []

    async def holding_spawn(argv: list[str], cwd: Path, env: Any, status_fd: int) -> UnreapedChild:
        holders.append(await asyncio.create_subprocess_exec(
            sys.executable, "-c", _HOLDER, str(status_fd), str(released),
            pass_fds=(status_fd,)))
        return await spawn(argv, cwd, env, status_fd)

    monkeypatch.setattr(guarded_command, "spawn_guard", holding_spawn)
    return holders


async def _release(released: Path, holders: list[asyncio.subprocess.Process]) -> None:
    released.touch()
    for holder in holders:
        await holder.wait()


def test_a_process_holding_the_guards_end_does_not_hold_up_the_exit_once_the_guard_died(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell's exit was waited for until a line came or every copy of the guard's end
    was closed: a process holding one kept `wait_for_exit`, release and the end of the
    prompt waiting for as long as it liked, once the command killed its guard."""
    released = tmp_path / "released"
    holders = _holding(monkeypatch, released)

    async def scenario() -> tuple[int, bool]:
        command = await GuardedCommand.start(SHELL, "kill -KILL $PPID", tmp_path, os.environ)
        try:
            code = await asyncio.wait_for(command.shell_exit(), HELD_SECONDS)
        finally:
            await _release(released, holders)
        return code, await command.ended()

    assert _run(scenario()) == (-signal.SIGKILL, True)


def test_a_process_holding_the_guards_end_does_not_hold_up_a_start_whose_guard_died(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = tmp_path / "failing_guard.py"
    failing.write_text("raise SystemExit(4)\n")
    monkeypatch.setattr(guarded_command, "_GUARD", str(failing))
    released = tmp_path / "released"
    holders = _holding(monkeypatch, released)

    async def scenario() -> None:
        try:
            await asyncio.wait_for(
                GuardedCommand.start(SHELL, "true", tmp_path, os.environ), HELD_SECONDS)
        finally:
            await _release(released, holders)

    with pytest.raises(OSError, match=r"its guard ended before the shell started \(4\)"):
        _run(scenario())


# reuse.py: in a pid namespace of its own (`unshare`), where a process may choose the next
# pid (/proc/sys/kernel/ns_last_pid), writes `0` on `fd` from a process given the pid `target`.
_REUSE = r'''
import os


def reuse(fd, target):
    """Writes `0` on `fd` from a process given the pid `target`: "written", "refused" (the
    other end is closed), or "not reused" if no process was given it."""
    for _ in range(200):
        with open("/proc/sys/kernel/ns_last_pid", "w") as last:
            last.write(str(target - 1))
        child = os.fork()
        if child == 0:
            code = 1
            try:
                if os.getpid() == target:
                    code = 2
                    os.write(fd, b"0\n")
                    code = 0
            finally:
                os._exit(code)
        code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        if code in (0, 2):
            return "written" if code == 0 else "refused"
    return "not reused"
'''

# Holds the inherited fd argv[1] (a copy of the guard's end); once the file argv[2] holds the
# guard's pid, gives that pid to a process of its own that writes `0`, and says in the file
# argv[3] whether one was; holds on until the file argv[4] exists.
_REUSING_HOLDER = """
import os, sys, time
from reuse import reuse
deadline = time.monotonic() + 120
while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.02)
with open(sys.argv[2]) as target, open(sys.argv[3] + ".new", "w") as done:
    done.write(reuse(int(sys.argv[1]), int(target.read())))
os.replace(sys.argv[3] + ".new", sys.argv[3])
while not os.path.exists(sys.argv[4]) and time.monotonic() < deadline:
    time.sleep(0.02)
"""

# argv: SHELL DIRECTORY. Runs as the first process of a new pid namespace from DIRECTORY, with
# reuse.py and holder.py beside it, and prints what happened as JSON.
_IN_A_PID_NAMESPACE = r'''
import asyncio, json, os, signal, subprocess, sys, time
from pathlib import Path
from shellexec.bridge import guarded_command
from shellexec.bridge.guarded_command import GuardedCommand, StatusChannel
from reuse import reuse

SHELL, HERE = sys.argv[1], Path(sys.argv[2])


async def channel():
    """A guard that wrote `7` and was reaped, then a process given its pid writes `0`."""
    ours, theirs = StatusChannel.pair()
    guard = subprocess.Popen(
        [sys.executable, "-c", "import os, sys; os.write(int(sys.argv[1]), b'7\\n')",
         str(theirs.fileno())], pass_fds=(theirs.fileno(),))
    handle = os.pidfd_open(guard.pid)
    inode = guarded_command._pidfd_inode(handle)
    guard.wait()
    reused = reuse(theirs.fileno(), guard.pid) == "written"
    theirs.close()
    status = StatusChannel(ours, guard.pid, asyncio.Event(), inode)  # the guard's exit unseen
    lines = [await status.readline(), await status.readline()]
    status.close()
    os.close(handle)
    return {"reused": reused, "inodes": inode is not None,
            "lines": [line.decode() for line in lines]}


async def command():
    """A process holding the guard's end kills the guard, and tries to write `0` from a
    process given its pid while the bridge still reads the guard's socket."""
    target, done, released = HERE / "target", HERE / "reused", HERE / "released"
    spawn = guarded_command.spawn_guard

    async def holding_spawn(argv, cwd, env, status_fd):
        await asyncio.create_subprocess_exec(
            sys.executable, str(HERE / "holder.py"), str(status_fd), str(target), str(done),
            str(released), pass_fds=(status_fd,))
        return await spawn(argv, cwd, env, status_fd)

    guarded_command.spawn_guard = holding_spawn
    command = await GuardedCommand.start(SHELL, "echo $$; exec sleep 300", HERE, os.environ)
    shell = int(await command.stdout.readline())
    exited = asyncio.ensure_future(command.shell_exit())
    os.kill(command.guard.pid, signal.SIGKILL)  # as the holder may
    await command.guard_exited.wait()
    command.kill_shell_group()
    # This process adopted the shell's; once it is reaped, only the guard keeps its pid.
    await asyncio.get_running_loop().run_in_executor(None, os.waitpid, shell, 0)
    (HERE / "target.new").write_text(str(command.guard.pid))
    os.replace(HERE / "target.new", target)
    deadline = time.monotonic() + 60
    while not done.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    try:
        code = await asyncio.wait_for(exited, 30)
    except TimeoutError:
        code = "still waiting"
    released.touch()
    return {"reused": done.read_text() if done.exists() else "not reused", "code": code}



result = {"command": asyncio.run(command())}
try:
    result["channel"] = asyncio.run(channel())
except Exception as error:  # an older bridge: said in the result
    result["channel"] = {"error": repr(error)}
print(json.dumps(result))
'''


def _in_a_pid_namespace(tmp_path: Path) -> dict[str, Any]:
    script = tmp_path / "in_a_pid_namespace.py"
    script.write_text(_IN_A_PID_NAMESPACE)
    (tmp_path / "reuse.py").write_text(_REUSE)
    (tmp_path / "holder.py").write_text(_REUSING_HOLDER)
    result: dict[str, Any] = json.loads(
        run_as_init(script, SHELL, str(tmp_path)).splitlines()[-1])
    return result


def test_a_code_written_by_a_process_given_the_dead_guards_pid_is_not_believed(
        tmp_path: Path) -> None:
    """A process holding the guard's end killed the guard and forked until a child got the
    guard's pid, which wrote `0`: its SCM_CREDENTIALS named the guard's pid, so the bridge
    took 0 for the shell's code. Now the bridge reaps the guard only once it let the command
    go, so no process is given its pid before then; once the guard exited the bridge takes
    what was queued and reads no more; and a message counts only if its SCM_PIDFD is of the
    guard itself (the channel alone, with a guard reaped at once)."""
    result = _in_a_pid_namespace(tmp_path)
    if not result["channel"].get("reused"):
        pytest.skip(f"a dead process's pid could not be given again here: {result}")

    assert result["command"] == {"reused": "not reused", "code": -signal.SIGKILL}, result
    if not result["channel"]["inodes"]:
        pytest.skip("pidfds do not tell processes apart here (Linux before 6.9)")
    # Even read before the bridge knew that the guard had exited.
    assert result["channel"]["lines"] == ["7\n", ""], result


def test_a_report_behind_megabytes_another_process_queued_is_read() -> None:
    """Once the guard exited, the bridge read at most 1 MiB more; a process holding the
    guard's end grew the socket's buffer and queued more than that ahead of the report, which
    was dropped, and the guard's own 0 was taken for the shell's code. Everything queued when
    the guard exited is read now."""
    async def scenario() -> bytes:
        ours, theirs = guarded_command.StatusChannel.pair()
        with theirs:
            theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 1024 * 1024)
            queued = theirs.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) // 2
            if queued <= 1024 * 1024:
                pytest.skip("this system keeps a socket's buffer within 1 MiB")
            theirs.sendall(b"x" * queued)  # this process: not the guard, so never believed
            guard = subprocess.Popen(
                [sys.executable, "-c", "import os, sys; os.write(int(sys.argv[1]), b'7\\n')",
                 str(theirs.fileno())], pass_fds=(theirs.fileno(),))
            handle = os.pidfd_open(guard.pid)
            guard.wait()
        exited = asyncio.Event()
        exited.set()
        status = guarded_command.StatusChannel(ours, guard.pid, exited,
                                               guarded_command._pidfd_inode(handle))
        try:
            return await status.readline()
        finally:
            status.close()
            os.close(handle)

    assert _run(scenario()) == b"7\n"


def test_a_guard_that_exited_0_without_a_report_read_is_no_code_0(tmp_path: Path) -> None:
    """A guard exits 0 only once it wrote the shell's code: if that was not read, 0 would be
    a code the command never gave."""
    silent = tmp_path / "silent_guard.py"
    # Says `ready` with a pid that is no child of its own (the bridge then holds no group and
    # answers `go`), and exits 0 without a report.
    silent.write_text("import os, sys\nos.write(int(sys.argv[2]), b'ready 1\\n')\n")

    async def scenario() -> int:
        command = await GuardedCommand.start(SHELL, "exit 7", tmp_path, os.environ)
        return await command.shell_exit()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(guarded_command, "_GUARD", str(silent))
        assert _run(scenario()) == 4  # terminal_guard.UNREPORTED


# Shuts the inherited fd argv[1] (a copy of the guard's end) for reading, so that no `go`
# reaches the shell's process, and exits.
_SHUTTER = """
import socket, sys
socket.socket(fileno=int(sys.argv[1])).shutdown(socket.SHUT_RD)
"""


def test_a_command_kept_from_hearing_go_ran_nothing_and_has_no_code_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process holding the guard's end shut it for reading: the shell's process heard no
    `go`, exited 1 without running the command, and the guard reported that 1 as the
    command's code, a plain failure the command never had. The guard now reports nothing,
    and exits UNREPORTED."""
    spawn = guarded_command.spawn_guard

    async def shutting_spawn(argv: list[str], cwd: Path, env: Any, status_fd: int
                             ) -> UnreapedChild:
        shutter = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _SHUTTER, str(status_fd), pass_fds=(status_fd,))
        await shutter.wait()
        return await spawn(argv, cwd, env, status_fd)

    monkeypatch.setattr(guarded_command, "spawn_guard", shutting_spawn)
    ran = tmp_path / "ran"

    async def scenario() -> int:
        command = await GuardedCommand.start(SHELL, f"touch {ran}; exit 0", tmp_path,
                                             os.environ)
        try:
            return await command.shell_exit()
        finally:
            await command.ended()
            command.abandon()

    assert _run(scenario()) == 4  # terminal_guard.UNREPORTED
    assert not ran.exists()


def test_the_status_socket_takes_no_file_descriptors() -> None:
    """A process holding the guard's end passed a socket lingering on unsent data: closing
    it, as the bridge closes every fd a message carries, blocked the event loop."""
    ours, theirs = guarded_command.StatusChannel.pair()
    with ours, theirs:
        try:
            passes = ours.getsockopt(socket.SOL_SOCKET, 83)  # SO_PASSRIGHTS, Linux 6.16
        except OSError:
            pytest.skip("this kernel has no SO_PASSRIGHTS")
        assert passes == 0
        with pytest.raises(PermissionError):
            socket.send_fds(theirs, [b"x"], [theirs.fileno()])


# Holds the inherited fd argv[1] (a copy of the guard's end), makes it non-blocking (a flag
# every copy shares) and keeps it full, says so in the file argv[2] once it first is, and
# goes on until the file argv[3] exists.
_FILLER = """
import fcntl, os, sys, time


def fill(fd):
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except BlockingIOError:
        pass


fd = int(sys.argv[1])
fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
fill(fd)
open(sys.argv[2], "w").close()
deadline = time.monotonic() + 120
while not os.path.exists(sys.argv[3]) and time.monotonic() < deadline:
    fill(fd)
    time.sleep(0.001)
"""


def test_a_report_written_on_a_socket_made_non_blocking_and_full_still_arrives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process holding the guard's end made it non-blocking and filled it: the guard's
    write of the shell's code failed (EAGAIN), and `exit 7` was reported as the guard's 4."""
    full, released = tmp_path / "full", tmp_path / "released"
    spawn = guarded_command.spawn_guard
    fillers: list[asyncio.subprocess.Process] = []

    async def filling_spawn(argv: list[str], cwd: Path, env: Any, status_fd: int) -> UnreapedChild:
        fillers.append(await asyncio.create_subprocess_exec(
            sys.executable, "-c", _FILLER, str(status_fd), str(full), str(released),
            pass_fds=(status_fd,)))
        return await spawn(argv, cwd, env, status_fd)

    monkeypatch.setattr(guarded_command, "spawn_guard", filling_spawn)

    async def scenario() -> int:
        command = await GuardedCommand.start(
            SHELL, f"while [ ! -e {full} ]; do sleep 0.02; done; exit 7", tmp_path, os.environ)
        try:
            return await command.shell_exit()
        finally:
            released.touch()
            for filler in fillers:
                await filler.wait()
            await asyncio.wait_for(command.ended(), ENDED_SECONDS)

    assert _run(scenario()) == 7

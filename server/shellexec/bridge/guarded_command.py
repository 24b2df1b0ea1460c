"""A hosted terminal's command run under its guard (`terminal_guard.py`, ADR 0136): the
shell's output, the shell's return code, and ending the command with everything it started.

The guard, not the shell, is the bridge's child: it stays while the command's background jobs
run, so the shell's return code comes over a status socket of its own, and the guard's exit
means that nothing the command started is left (on Linux; elsewhere, that the shell ended).
The guard first says `ready` with the pid of the shell's process: only then does SIGTERM
reach the guard's own handling, so `start` waits for it, and a command killed as soon as it
was created is killed by its guard. A start cancelled before then ends its guard too. `start`
then takes a pidfd of the shell's process, which leads the command's process group, so that
the bridge can signal that group for as long as any process is left in it, never another
group given the same id later (`kill_shell_group`), and answers `go`: the shell's process
runs the command line only then.

The status socket is one of a Unix socket pair, and each message is taken only if the kernel
says the guard sent it (SCM_CREDENTIALS): another process of the user that got hold of the
guard's end (through ptrace or pidfd_getfd in the instant before the guard made itself not
dumpable; a socket cannot be opened through /proc/<pid>/fd) cannot make up a `ready` or a
return code. What such a process writes is dropped, with a warning. Off Linux there are no
credentials to check, and no pidfd.

Such a process could also outlive the guard (it may kill it) and keep its copy of the end
open: so once the guard has exited, the bridge takes what is already queued on the socket
(all the guard wrote is, by then) and reads nothing more. Nor can it speak with the guard's
pid: the bridge reaps the guard only once it let the command go (`forget_groups`), so until
then the exited guard is a zombie whose pid no other process can be given. That also keeps
the numbers of the guard's session and process group its own while the bridge sweeps what is
left in them (terminals.py), so no later session given the number is swept. And each message
carries a pidfd of its sender (SCM_PIDFD, Linux 6.5), and counts only if that pidfd is of the
very process `start` holds a pidfd of (with pidfs, Linux 6.9, each process's pidfds share an
inode that no other process ever has).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import termios
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from shellexec.bridge.child_exit import UnreapedChild, exited_within, spawn_unreaped

log = logging.getLogger("shellexec.bridge")

_GUARD: Final = str(Path(__file__).with_name("terminal_guard.py"))
# What the guard writes: that it is ready, with the pid of the shell's process, then a return
# code as `subprocess` gives it; and what the bridge answers to `ready`.
_READY: Final = re.compile(rb"ready ([0-9]{1,10})\n")
_REPORT: Final = re.compile(rb"-?[0-9]{1,3}\n")
_GO: Final = b"go\n"  # terminal_guard.GO
# The guard's exit code when another process traces it (terminal_guard.TRACED).
_TRACED: Final = 3
# How long an ended guard may take to kill what it guards: rounds of 50 ms, normally one or two.
GUARD_GRACE_SECONDS: Final = 5.0
# Linux's `struct ucred` (pid, uid, gid), which SCM_CREDENTIALS carries; None off Linux.
_PASSCRED: Final = getattr(socket, "SO_PASSCRED", None)
_CREDENTIALS: Final = struct.Struct("iII")
# Linux 6.5: each message also carries a pidfd of its sender (an fd the receiver must close).
_PASSPIDFD: Final = 76  # SO_PASSPIDFD
_SCM_PIDFD: Final = 0x04
_FD: Final = struct.Struct("i")
_ANCILLARY_BYTES: Final = socket.CMSG_SPACE(_CREDENTIALS.size) + socket.CMSG_SPACE(_FD.size)
# What the guard says in all is two short lines: more from it is dropped.
_HELD_BYTES: Final = 64
_RECEIVE_BYTES: Final = 256
# Messages read per turn of the event loop, so that a flood cannot hold the loop.
_RECEIVES_PER_TURN: Final = 16
# What one read takes once the guard exited, of what was queued by then (`_take_the_rest`).
_DRAIN_BYTES: Final = 64 * 1024
# Linux 6.16: a socket that takes no file descriptors (SCM_RIGHTS). Closing one a hostile
# sender passed (a TCP socket lingering on unsent data) could block the event loop.
_PASSRIGHTS: Final = 83  # SO_PASSRIGHTS
# The guard's exit code when it could not write the shell's (terminal_guard.UNREPORTED).
_UNREPORTED: Final = 4
# pidfd_send_signal's flag (Linux 6.9) that signals the process group the pidfd's process
# leads (its pid is the group's id), even once that process is gone.
PIDFD_SIGNAL_PROCESS_GROUP: Final = 4


async def spawn_guard(argv: list[str], cwd: Path, env: Mapping[str, str], status_fd: int
                      ) -> UnreapedChild:
    """The guard process started with `argv` in a session of its own, its output and errors
    on one pipe (which may stay open after it exited: `child_exit`); reaped only once let
    go."""
    return await spawn_unreaped(
        argv, pass_fds=(status_fd,), stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        cwd=str(cwd), env=dict(env), start_new_session=True)


class StatusChannel:
    """The bridge's end of a guard's status socket, read without blocking the event loop:
    lines of what the guard itself sent, and nothing of what another process holding the
    guard's end wrote (on Linux: its SCM_CREDENTIALS name another pid, or its SCM_PIDFD
    another process). It ends with the guard's end, or once the guard exited and what was
    queued by then is taken (`guard_exited`), whichever comes first."""

    def __init__(self, end: socket.socket, guard: int, guard_exited: asyncio.Event,
                 guard_inode: int | None) -> None:
        self._end = end
        self._guard = guard
        self._guard_exited = guard_exited
        # The inode of the guard's pidfds, where it tells the guard from every other
        # process (`_pidfd_inode`); None: the pid alone tells.
        self._guard_inode = guard_inode
        self._held = bytearray()
        self._done = False  # the guard's end closed, or this one
        self._arrived = asyncio.Event()
        self._refused = 0
        self._loop = asyncio.get_running_loop()
        end.setblocking(False)
        self._loop.add_reader(end.fileno(), self._receive)

    @staticmethod
    def pair() -> tuple[socket.socket, socket.socket]:
        """The bridge's end, set to receive its peer's credentials, and the guard's."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        if _PASSCRED is not None:
            ours.setsockopt(socket.SOL_SOCKET, _PASSCRED, 1)
            with contextlib.suppress(OSError):  # before Linux 6.5 the pid alone tells
                ours.setsockopt(socket.SOL_SOCKET, _PASSPIDFD, 1)
            with contextlib.suppress(OSError):  # before Linux 6.16 passed fds are closed
                ours.setsockopt(socket.SOL_SOCKET, _PASSRIGHTS, 0)
        return ours, theirs

    async def readline(self) -> bytes:
        """The guard's next line; what is left (maybe b"") once its end closed, or once the
        guard exited and what it had written is taken."""
        while True:
            end = self._held.find(b"\n")
            if end >= 0:
                line = bytes(self._held[:end + 1])
                del self._held[:end + 1]
                return line
            if self._done:
                line = bytes(self._held)
                self._held.clear()
                return line
            if self._guard_exited.is_set():
                self._take_the_rest()
                continue
            self._arrived.clear()
            await _first_of(self._arrived, self._guard_exited)

    def send(self, data: bytes) -> None:
        """Sends `data` to the guard's end (at most a few bytes: the socket takes them)."""
        with contextlib.suppress(OSError):  # the guard's end is gone: nothing is waiting
            self._end.send(data)

    def close(self) -> None:
        self._finish()
        if self._end.fileno() >= 0:
            self._end.close()

    def _finish(self) -> None:
        """Reads nothing more: what is held is all there is."""
        if not self._done:
            self._loop.remove_reader(self._end.fileno())
            self._done = True
            self._arrived.set()

    def _receive(self) -> None:
        if self._guard_exited.is_set():
            self._take_the_rest()
            return
        for _ in range(_RECEIVES_PER_TURN):
            if not self._take_one():
                return

    def _take_the_rest(self) -> None:
        """The guard has exited, so what it wrote is queued on the socket by now: takes the
        bytes queued at this moment and reads nothing more, so that a process still holding
        a copy of the guard's end can neither keep the bridge waiting nor speak later (with
        the guard's pid, once another process of its own is given it). What it writes from
        now on comes after the guard's report; what it wrote before, however much (it may
        have grown the socket's buffer), is read through to the report."""
        left = _queued_bytes(self._end)
        while left > 0 and (taken := self._take_one(min(left, _DRAIN_BYTES))):
            left -= taken
        self._finish()

    def _take_one(self, size: int = _RECEIVE_BYTES) -> int:
        """Takes one message queued on the socket (at most `size` bytes), kept if the guard
        sent it; how many bytes it read, 0 once nothing more is to be read for now."""
        if self._done:
            return 0
        try:
            data, ancillary, flags, _ = self._end.recvmsg(size, _ANCILLARY_BYTES)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            data, ancillary, flags = b"", [], 0
        sender, inode = _sender(ancillary, flags)  # closes the fds the message carried
        if not data:  # every holder of the guard's end closed it (or shut it down)
            self._finish()
            return 0
        if self._from_the_guard(sender, inode):
            self._held += data[:max(0, _HELD_BYTES - len(self._held))]
            self._arrived.set()
        return len(data)

    def _from_the_guard(self, sender: int | None, inode: int | None) -> bool:
        if _PASSCRED is None:  # nothing tells who wrote it
            return True
        if sender == self._guard and (
                self._guard_inode is None or inode is None or inode == self._guard_inode):
            return True
        self._refused += 1
        if self._refused == 1:
            who = ("another process given its pid" if sender == self._guard
                   else f"process {sender}" if sender else "a process the kernel did not name")
            log.warning("terminal guard %d: %s wrote on its status socket; not believed",
                        self._guard, who)
        return False


def _queued_bytes(end: socket.socket) -> int:
    """How many bytes wait to be read on `end` (FIONREAD, SIOCINQ on a socket)."""
    try:
        counted = fcntl.ioctl(end.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return 0
    return int(struct.unpack("i", counted)[0])


def _sender(ancillary: list[tuple[int, int, bytes]], flags: int
            ) -> tuple[int | None, int | None]:
    """Who sent a message, as its ancillary data tells: the pid in its SCM_CREDENTIALS (None
    if there are none, or they were cut short) and the inode of its SCM_PIDFD (None if the
    kernel gave no pidfd). Closes every fd the message carried."""
    sender = None
    inode = None
    for level, kind, data in ancillary:
        if level != socket.SOL_SOCKET:
            continue
        if kind == socket.SCM_CREDENTIALS and len(data) >= _CREDENTIALS.size:
            sender = _CREDENTIALS.unpack_from(data)[0]
        elif kind in (_SCM_PIDFD, socket.SCM_RIGHTS):  # fds now ours: each is closed
            for (fd,) in _FD.iter_unpack(data[:len(data) - len(data) % _FD.size]):
                if fd < 0:  # the kernel could not make a pidfd (Linux 6.5 to 6.15, once
                    continue  # the sender was reaped): the pid alone tells
                with contextlib.suppress(OSError):
                    if kind == _SCM_PIDFD:
                        inode = os.fstat(fd).st_ino
                os.close(fd)
    if flags & socket.MSG_CTRUNC:
        return None, inode
    return sender, inode


async def _first_of(*events: asyncio.Event) -> None:
    """Waits until one of `events` is set."""
    waiting = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiting:
            waiter.cancel()


def _hold_guard(guard: int) -> int | None:
    """A pidfd of the guard just started, if it is the bridge's child leading its own
    session (not reaped yet, the pid is still its own, even if it already died); None off
    Linux."""
    return _pidfd_if(guard, parent=os.getpid(), group=guard, session=guard)


def _pidfd_if(pid: int, *, parent: int, group: int, session: int) -> int | None:
    """A pidfd of the process `pid` if, once the pidfd is held (so the pid names that
    process), its parent, process group and session are these; else None (off Linux too)."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        if [int(fields[1]), int(fields[2]), int(fields[3])] == [parent, group, session]:
            return handle
    except (OSError, IndexError, ValueError):
        pass
    os.close(handle)
    return None


def _pidfd_inode(handle: int | None) -> int | None:
    """The inode of the pidfd `handle`, if inodes tell processes apart: with pidfs (Linux
    6.9) all pidfds of a process share one inode, which no other process ever has; before,
    every pidfd had the same one. None if they do not, or without a pidfd."""
    if handle is None:
        return None
    try:
        mine = os.pidfd_open(os.getpid())
    except OSError:
        return None
    try:
        inode = os.fstat(handle).st_ino
        return inode if inode != os.fstat(mine).st_ino else None
    except OSError:
        return None
    finally:
        os.close(mine)


def _kill_led_group(leader: int | None) -> bool:
    """SIGKILLs the process group that the process of the pidfd `leader` leads (or led);
    whether it was signalled: False without a pidfd, once the group is empty (ESRCH), and on
    kernels before 6.9 (EINVAL: no PIDFD_SIGNAL_PROCESS_GROUP)."""
    if leader is None:
        return False
    try:
        signal.pidfd_send_signal(leader, signal.SIGKILL, None, PIDFD_SIGNAL_PROCESS_GROUP)
    except OSError:
        return False
    return True


def _hold_shell_group(guard: int, shell: int) -> int | None:
    """A pidfd of the shell's process, which the guard says it forked, if that process is
    the guard's child leading its own group in the guard's session (it is waiting for `go`);
    None off Linux."""
    return _pidfd_if(shell, parent=guard, group=shell, session=guard)


@dataclass(slots=True)
class GuardedCommand:
    guard: UnreapedChild
    guard_exited: asyncio.Event
    status: StatusChannel
    # A pidfd of the shell's process, the leader of the command's process group (None off
    # Linux, or if it could not be checked): `kill_shell_group`.
    shell_group: int | None
    # Closes the guard's output pipe: once the guard exited, no other process may still
    # hold it open (a background job it left) when nothing reads it any more.
    close_guard_pipes: Callable[[], None]
    # A pidfd of the guard, the leader of its own process group (None off Linux, or if it
    # could not be checked): `kill_guard_group`, and what tells its messages from others'.
    guard_handle: int | None = None

    @classmethod
    async def start(cls, shell: str, line: str, cwd: Path,
                    env: Mapping[str, str]) -> GuardedCommand:
        """Runs `shell -c line` under a new guard, in a session of its own, stdin closed,
        stdout and stderr joined into `stdout`. OSError if the guard cannot be started."""
        ours, theirs = StatusChannel.pair()
        try:
            guard = await spawn_guard(
                [sys.executable, "-I", "-S", _GUARD, str(os.getpid()), str(theirs.fileno()),
                 shell, "-c", line], cwd, env, theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        held = _hold_guard(guard.pid)
        status = StatusChannel(ours, guard.pid, guard.exited, _pidfd_inode(held))
        group: int | None = None
        try:
            ready = _READY.fullmatch(await status.readline())
            if ready is not None:
                group = _hold_shell_group(guard.pid, int(ready[1]))
                status.send(_GO)
        except BaseException:  # cancelled: nobody else would end this command
            with contextlib.suppress(ProcessLookupError):
                guard.send_signal(signal.SIGTERM)
            status.close()
            for handle in (group, held):
                if handle is not None:
                    os.close(handle)
            guard.let_go()
            raise
        command = cls(guard, guard.exited, status, group, guard.close_pipes, held)
        if ready is None:
            status.close()
            command.forget_groups()
            code = await command._exit()
            guard.close_pipes()  # the guard exited, and started nothing that could hold them
            if code == _TRACED:
                raise OSError("its guard was traced by another process (ptrace), so it ran "
                              "nothing")
            raise OSError(f"its guard ended before the shell started ({code})")
        return command

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.guard.stdout is not None
        return self.guard.stdout

    async def shell_exit(self) -> int:
        """The shell's return code once it exited (negative: the signal that ended it); the
        guard's own if the guard ended without saying (it said nothing before it exited:
        what comes later, from a process still holding its end, is not waited for)."""
        try:
            line = await self.status.readline()
        finally:
            self.status.close()
        if _REPORT.fullmatch(line):
            return int(line)
        code = await self._exit()
        # A guard exits 0 only once it wrote the shell's code; if that was not read (a
        # process holding its end got in the way), 0 would be a code the command never gave.
        return _UNREPORTED if code == 0 else code

    def end(self) -> None:
        """Has the guard kill the command and everything it started, unless all ended."""
        with contextlib.suppress(ProcessLookupError):  # let go of already
            # The command may have stopped its guard (`kill -STOP $PPID`, the same user): it
            # continues first.
            self.guard.send_signal(signal.SIGCONT)
            self.guard.send_signal(signal.SIGTERM)

    async def ended(self, grace: float = GUARD_GRACE_SECONDS) -> bool:
        """Waits until the guard exited: the command and what it started are gone. Whether it
        did so within `grace` seconds; if not, the guard is SIGKILLed so that nothing waits
        for it, and what it guarded may run on."""
        if await exited_within(self.guard_exited, grace):
            return True
        with contextlib.suppress(ProcessLookupError):
            self.guard.kill()
        await self.guard_exited.wait()
        return False

    def kill_shell_group(self) -> bool:
        """SIGKILLs every process left in the shell's process group, through the pidfd of its
        leader: a process forking at that moment cannot escape, and a later group given the
        same id is not hit. Whether it was signalled: False once the group is empty, off
        Linux, and on kernels before 6.9 (which lack the flag)."""
        return _kill_led_group(self.shell_group)

    def kill_guard_group(self) -> bool:
        """Once the guard has exited, SIGKILLs every process left in its process group (one
        of the command's may join it: `setpgid(0, $PPID)`), as `kill_shell_group` does the
        shell's. Never while the guard lives: that would kill the guard. Whether it was
        signalled: False while the guard lives, once the group is empty, off Linux, and on
        kernels before 6.9 (the sweep then signals the group by its id, `_kill_group`)."""
        return self.guard_exited.is_set() and _kill_led_group(self.guard_handle)

    def abandon(self) -> None:
        """Lets go of a command whose guard exited and whose exit nobody will read: its
        status socket, its process groups and its pipes."""
        assert self.guard_exited.is_set()
        self.status.close()
        self.forget_groups()
        self.close_guard_pipes()

    def forget_groups(self) -> None:
        """Closes the pidfds of the shell's process and of the guard, and reaps the guard once
        it exited (now, if it has), once nothing more is to be ended: from then on its pid,
        and the numbers of its session and group, may be another process's."""
        for handle in (self.shell_group, self.guard_handle):
            if handle is not None:
                os.close(handle)
        self.shell_group = self.guard_handle = None
        self.guard.let_go()

    async def _exit(self) -> int:
        """The guard's own return code, once it exited."""
        await self.guard_exited.wait()
        assert self.guard.returncode is not None
        return self.guard.returncode

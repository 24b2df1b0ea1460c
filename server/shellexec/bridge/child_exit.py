"""Child processes whose own exit can be awaited, apart from their pipes.

On Python 3.11 `asyncio.subprocess.Process.wait()` returns only once the child exited and
every pipe to it closed. A process the child started and that outlived it (a `setsid`
daemon, an agent's helper server) may hold those pipes as long as it runs, so `wait()` would
wait for that process instead, maybe for ever. `spawn_watched` also gives an event set when
the child itself exited; its `returncode` is known from then on, and a way to close the pipes
such a process still holds, once the caller stops reading them (else asyncio closes them only
when it collects the transport, after the loop is gone, with a traceback).

`spawn_unreaped` starts a child that the caller reaps itself, when it says so: until then an
exited child stays a zombie, whose pid no other process can be given (ADR 0136).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import Any, Final, NamedTuple

# What a child's output may hold unread: `asyncio.subprocess`'s default.
DEFAULT_LIMIT: Final = 2**16


class _ExitWatchingProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


class Watched(NamedTuple):
    """A child process, the event set once it exited, and what closes its pipes."""

    process: asyncio.subprocess.Process
    exited: asyncio.Event
    close_pipes: Callable[[], None]


async def spawn_watched(*argv: str, limit: int = DEFAULT_LIMIT, **options: Any) -> Watched:
    """`asyncio.create_subprocess_exec(*argv, limit=limit, **options)`, the event set once
    that process exited, and what closes its pipes."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ExitWatchingProtocol(limit, loop), *argv, **options)
    return Watched(asyncio.subprocess.Process(transport, protocol, loop), protocol.exited,
                   transport.close)


async def exited_within(exited: asyncio.Event, seconds: float) -> bool:
    """Whether the process whose exit `exited` tells ended within `seconds`."""
    try:
        async with asyncio.timeout(seconds):
            await exited.wait()
    except TimeoutError:
        return False
    return True


class UnreapedChild:
    """A child process that stays a zombie once it exited, until `let_go` says nothing more
    will be done by its pid: the pid, and the numbers of the process group and session the
    child leads, cannot be given to another process until then, so processes found by them
    are still the child's (asyncio's own watcher reaps a child the moment it exits).

    `exited` is set, and `returncode` known (negative: the signal that ended it), once the
    child exited; `stdout` reads its output; `close_pipes` closes that pipe."""

    def __init__(self, popen: subprocess.Popen[bytes], stdout: asyncio.StreamReader,
                 close_pipes: Callable[[], None], loop: asyncio.AbstractEventLoop) -> None:
        self.pid = popen.pid
        self.stdout = stdout
        self.close_pipes = close_pipes
        self.exited = asyncio.Event()
        self.returncode: int | None = None
        self._popen = popen
        self._loop = loop
        self._let_go = self._reaped = False
        threading.Thread(target=self._watch, name=f"exit of {popen.pid}", daemon=True).start()

    def send_signal(self, sig: int) -> None:
        """Signals the child, even a zombie (which ignores it); ProcessLookupError once it
        was reaped, when its pid may be another process's."""
        if self._reaped:
            raise ProcessLookupError(self.pid)
        os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def let_go(self) -> None:
        """Reaps the child once it exited (now, if it has): nothing is done by its pid after
        this."""
        self._let_go = True
        if self.exited.is_set():
            self._reap()

    @property
    def holds_its_pid(self) -> bool:
        """Whether the pid is still the child's (alive, or a zombie not reaped): processes
        found by its number, as their session or group, are then the child's own. False once
        it was reaped, here or by another (SIGCHLD ignored: the kernel reaps at exit)."""
        return not self._reaped

    def _watch(self) -> None:
        """In a thread of its own: waits until the child exited, without reaping it."""
        try:
            seen = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:  # reaped already (never by this module): code unknown
            seen = None
        code = 255 if seen is None else (
            -seen.si_status if seen.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
            else seen.si_status)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for it
            self._loop.call_soon_threadsafe(self._exit, code, seen is None)

    def _exit(self, code: int, reaped: bool) -> None:
        # Reaped by another, the pid may be any process's by now: never signalled or waited
        # for again.
        self._reaped = self._reaped or reaped
        self.returncode = code
        # Popen must never wait for the pid itself: once reaped here, it may be another's.
        self._popen.returncode = code
        self.exited.set()
        if self._let_go:
            self._reap()

    def _reap(self) -> None:
        if not self._reaped:
            self._reaped = True
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)


async def spawn_unreaped(argv: list[str], limit: int = DEFAULT_LIMIT, **options: Any
                         ) -> UnreapedChild:
    """`subprocess.Popen(argv, stdout=PIPE, **options)` as an `UnreapedChild`, its output
    read by the running loop."""
    loop = asyncio.get_running_loop()
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, **options)
    assert popen.stdout is not None
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), popen.stdout)
    except BaseException:
        popen.kill()
        popen.wait()
        popen.stdout.close()
        raise
    return UnreapedChild(popen, reader, transport.close, loop)

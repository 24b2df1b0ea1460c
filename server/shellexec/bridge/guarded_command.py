"""A hosted terminal's command run under its guard (`terminal_guard.py`, ADR 0136): the
shell's output, the shell's return code, and ending the command with everything it started.

The guard, not the shell, is the bridge's child: it stays while the command's background jobs
run, so the shell's return code comes over a pipe of its own, and the guard's exit means that
nothing the command started is left (on Linux; elsewhere, that the shell ended). That pipe
first says `ready`: only then does SIGTERM reach the guard's own handling, so `start` waits
for it, and a command killed as soon as it was created is killed by its guard. A start
cancelled before then ends its guard too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from shellexec.bridge.child_exit import Watched, exited_within, spawn_watched

_GUARD: Final = str(Path(__file__).with_name("terminal_guard.py"))
# What the guard writes: that it is ready, then a return code as `subprocess` gives it.
_READY: Final = b"ready\n"
_REPORT: Final = re.compile(rb"-?[0-9]{1,3}\n")
# How long an ended guard may take to kill what it guards: rounds of 50 ms, normally one or two.
GUARD_GRACE_SECONDS: Final = 5.0


async def spawn_guard(argv: list[str], cwd: Path, env: Mapping[str, str], status_fd: int
                      ) -> Watched:
    """The guard process started with `argv`, the event set once it exited (its output may
    stay open after that: `child_exit`), and what closes its pipes."""
    return await spawn_watched(
        *argv, pass_fds=(status_fd,), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        cwd=str(cwd), env=dict(env), start_new_session=True)


@dataclass(slots=True)
class GuardedCommand:
    guard: asyncio.subprocess.Process
    guard_exited: asyncio.Event
    report: asyncio.StreamReader
    report_pipe: asyncio.ReadTransport
    # Closes the guard's output pipe: once the guard exited, no other process may still
    # hold it open (a background job it left) when nothing reads it any more.
    close_guard_pipes: Callable[[], None]

    @classmethod
    async def start(cls, shell: str, line: str, cwd: Path,
                    env: Mapping[str, str]) -> GuardedCommand:
        """Runs `shell -c line` under a new guard, in a session of its own, stdin closed,
        stdout and stderr joined into `stdout`. OSError if the guard cannot be started."""
        read_end, write_end = os.pipe()
        try:
            guard, exited, close_pipes = await spawn_guard(
                [sys.executable, "-I", "-S", _GUARD, str(os.getpid()), str(write_end),
                 shell, "-c", line], cwd, env, write_end)
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        report = asyncio.StreamReader()
        pipe: asyncio.ReadTransport | None = None
        try:
            pipe, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(report), os.fdopen(read_end, "rb", 0))
            ready = await report.readline()
        except BaseException:  # cancelled: nobody else would end this command
            with contextlib.suppress(ProcessLookupError):
                guard.send_signal(signal.SIGTERM)
            if pipe is not None:
                pipe.close()
            raise
        command = cls(guard, exited, report, pipe, close_pipes)
        if ready != _READY:
            pipe.close()
            raise OSError(f"its guard ended before the shell started ({await command._exit()})")
        return command

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.guard.stdout is not None
        return self.guard.stdout

    async def shell_exit(self) -> int:
        """The shell's return code once it exited (negative: the signal that ended it); the
        guard's own if the guard ended without saying."""
        try:
            line = await self.report.readline()
        finally:
            self.report_pipe.close()
        if _REPORT.fullmatch(line):
            return int(line)
        return await self._exit()

    def end(self) -> None:
        """Has the guard kill the command and everything it started, unless all ended."""
        with contextlib.suppress(ProcessLookupError):
            # The command may have stopped its guard (`kill -STOP $PPID`, the same user): it
            # continues first. In this order the guard is still alive at each signal: a
            # signal after the SIGTERM could find it exited, and sending one reaps it behind
            # asyncio's back ("Unknown child process pid").
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

    async def _exit(self) -> int:
        """The guard's own return code, once it exited."""
        await self.guard_exited.wait()
        assert self.guard.returncode is not None
        return self.guard.returncode

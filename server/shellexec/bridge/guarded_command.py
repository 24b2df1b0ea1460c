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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_GUARD: Final = str(Path(__file__).with_name("terminal_guard.py"))
# What the guard writes: that it is ready, then a return code as `subprocess` gives it.
_READY: Final = b"ready\n"
_REPORT: Final = re.compile(rb"-?[0-9]{1,3}\n")


@dataclass(slots=True)
class GuardedCommand:
    guard: asyncio.subprocess.Process
    report: asyncio.StreamReader
    report_pipe: asyncio.ReadTransport

    @classmethod
    async def start(cls, shell: str, line: str, cwd: Path,
                    env: Mapping[str, str]) -> GuardedCommand:
        """Runs `shell -c line` under a new guard, in a session of its own, stdin closed,
        stdout and stderr joined into `stdout`. OSError if the guard cannot be started."""
        read_end, write_end = os.pipe()
        try:
            guard = await asyncio.create_subprocess_exec(
                sys.executable, "-I", "-S", _GUARD, str(os.getpid()), str(write_end),
                shell, "-c", line, pass_fds=(write_end,),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                cwd=str(cwd), env=dict(env), start_new_session=True)
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
        if ready != _READY:
            pipe.close()
            raise OSError(f"its guard ended before the shell started ({await guard.wait()})")
        return cls(guard, report, pipe)

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
        return await self.guard.wait()

    def end(self) -> None:
        """Has the guard kill the command and everything it started, unless all ended."""
        with contextlib.suppress(ProcessLookupError):
            self.guard.send_signal(signal.SIGTERM)

    async def ended(self) -> None:
        """Waits until the guard exited: the command and what it started are gone."""
        await self.guard.wait()

"""Child processes whose own exit can be awaited, apart from their pipes.

On Python 3.11 `asyncio.subprocess.Process.wait()` returns only once the child exited and
every pipe to it closed. A process the child started and that outlived it (a `setsid`
daemon, an agent's helper server) may hold those pipes as long as it runs, so `wait()` would
wait for that process instead, maybe for ever. `spawn_watched` also gives an event set when
the child itself exited; its `returncode` is known from then on, and a way to close the pipes
such a process still holds, once the caller stops reading them (else asyncio closes them only
when it collects the transport, after the loop is gone, with a traceback).
"""

from __future__ import annotations

import asyncio
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

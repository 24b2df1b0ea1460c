"""Child processes whose own exit can be awaited, apart from their pipes.

On Python 3.11 `asyncio.subprocess.Process.wait()` returns only once the child exited and
every pipe to it closed. A process the child started and that outlived it (a `setsid`
daemon, an agent's helper server) may hold those pipes as long as it runs, so `wait()` would
wait for that process instead, maybe for ever. `spawn_watched` also gives an event set when
the child itself exited; its `returncode` is known from then on.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

# What a child's output may hold unread: `asyncio.subprocess`'s default.
DEFAULT_LIMIT: Final = 2**16


class _ExitWatchingProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


async def spawn_watched(*argv: str, limit: int = DEFAULT_LIMIT, **options: Any
                        ) -> tuple[asyncio.subprocess.Process, asyncio.Event]:
    """`asyncio.create_subprocess_exec(*argv, limit=limit, **options)`, and the event set
    once that process exited."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ExitWatchingProtocol(limit, loop), *argv, **options)
    return asyncio.subprocess.Process(transport, protocol, loop), protocol.exited


async def exited_within(exited: asyncio.Event, seconds: float) -> bool:
    """Whether the process whose exit `exited` tells ended within `seconds`."""
    try:
        await asyncio.wait_for(exited.wait(), seconds)
    except TimeoutError:
        return False
    return True

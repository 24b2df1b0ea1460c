"""How much of the writer one caller's publishes may take.

Units of work run one after another on the event loop (see `store.database`), so a unit that
takes long holds up every other caller, reads included. Most publishes take well under a
millisecond, but some cost what their message has grown to: a chat chunk appends to its
message, whose view (masked for the feed and the answer) is built again for each chunk. 8-byte
chunks into a message of 256 KiB of coloured `TOKEN=` lines took 150 ms each, and sixteen
such publishers of one token raised every other caller's p99 to 2.5 s.

So each caller's publishes may take FREE_SECONDS of the writer each; what they take beyond
that is its debt, which drains at SHARE seconds a second. A caller whose debt is past BURST
waits before its next publish until it is back at BURST: its publishes then take at most about
SHARE of the writer, whatever they cost, and the rest is left to the others. A caller is a
token's name (with authentication off, everyone). See ADR 0148.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

# What a publish may take of the writer without counting: far more than a usual one takes.
FREE_SECONDS = 0.002
# The part of the writer's time one caller's costly publishes may take, over time.
SHARE = 0.25
# The debt a caller may run up before it waits: a few costly publishes pass at once.
BURST_SECONDS = 0.5


@dataclass(slots=True)
class _Debt:
    seconds: float
    at: float


class WriterPace:
    """Each caller's debt of writer time (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, *,
                 free_seconds: float = FREE_SECONDS, share: float = SHARE,
                 burst_seconds: float = BURST_SECONDS,
                 on_wait: Callable[[float], None] = lambda seconds: None) -> None:
        self._clock = clock
        self._sleep = sleep
        self._on_wait = on_wait  # told each wait's length: the metrics
        self._free = free_seconds
        self._share = share
        self._burst = burst_seconds
        self._debts: dict[str, _Debt] = {}

    def debt(self, caller: str) -> float:
        """The caller's debt now, in seconds of writer time."""
        found = self._debts.get(caller)
        if found is None:
            return 0.0
        now = self._clock()
        found.seconds = max(0.0, found.seconds - (now - found.at) * self._share)
        found.at = now
        if not found.seconds:
            del self._debts[caller]  # no debt: nothing to remember
            return 0.0
        return found.seconds

    def must_wait(self, caller: str) -> bool:
        """Whether the caller's debt is past BURST_SECONDS (a dictionary look-up for a caller
        without debt: nearly every publish asks)."""
        return caller in self._debts and self.debt(caller) > self._burst

    async def wait(self, caller: str) -> None:
        """Returns once the caller's debt is back within BURST_SECONDS (as owed when it was
        called: the caller's publishes waiting together leave together)."""
        excess = self.debt(caller) - self._burst
        if excess > 0:
            self._on_wait(excess / self._share)
            await self._sleep(excess / self._share)

    def charge(self, caller: str, seconds: float) -> None:
        """A publish of the caller took `seconds` of the writer."""
        owed = seconds - self._free
        if owed > 0:
            self._debts[caller] = _Debt(self.debt(caller) + owed, self._clock())

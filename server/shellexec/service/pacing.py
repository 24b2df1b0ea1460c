"""How much of the writer one caller's publishes may take.

Units of work run one after another on the event loop (see `store.database`), so a unit that
takes long holds up every other caller, reads included. Most publishes take well under a
millisecond, but some cost what their message has grown to: a chat chunk appends to its
message, whose view (masked for the feed and the answer) is built again for each chunk. 8-byte
chunks into a message of 256 KiB of coloured `TOKEN=` lines took 150 ms each, and sixteen
such publishers of one token raised every other caller's p99 to 2.5 s.

So each caller's publishes may take FREE_SECONDS of the writer each; what they take beyond
that is its debt, which drains at SHARE seconds a second. A caller in debt has one publish at
the writer at a time, and that one waits until the debt is back within BURST_SECONDS: its
publishes then take at most about SHARE of the writer, however many it sends at once. A caller
out of debt has at most MAX_IN_FLIGHT publishes at the writer at once, the most that can run
before any is charged. A caller is a token's name; calls without one (authentication off,
where everyone is one caller on loopback) are not paced. See ADR 0148.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

# What a publish may take of the writer without counting: far more than a usual one takes.
FREE_SECONDS = 0.002
# The part of the writer's time one caller's costly publishes may take, over time.
SHARE = 0.25
# The debt a caller may run up before it waits: a few costly publishes pass at once.
BURST_SECONDS = 0.5
# The publishes of one caller out of debt at the writer at once (a bridge sends one at a time).
MAX_IN_FLIGHT = 4


class Owing(Protocol):
    """A caller's debt, as of `at` (a clock reading): what every pace keeps of each caller."""

    debt: float
    at: float


State = TypeVar("State", bound=Owing)


class CallerDebts(Generic[State]):
    """Each caller's debt, paid back at `rate` a second (a leaky bucket) on `clock`, and the
    `sleep` a caller past its bound waits with, telling `on_wait` how long: what the writer's
    pace and the replays' pace share. Used on the event loop only."""

    def __init__(self, clock: Callable[[], float], sleep: Callable[[float], Awaitable[None]],
                 rate: float, on_wait: Callable[[float], None]) -> None:
        self._clock = clock
        self._sleep = sleep
        self._rate = rate
        self._on_wait = on_wait  # told each wait's length: the metrics
        self._callers: dict[str, State] = {}

    def debt(self, caller: str) -> float:
        """The caller's debt now."""
        state = self._callers.get(caller)
        return 0.0 if state is None else self._drained(state)

    def _drained(self, state: State) -> float:
        now = self._clock()
        state.debt = max(0.0, state.debt - (now - state.at) * self._rate)
        state.at = now
        return state.debt


@dataclass(slots=True)
class _Caller:
    debt: float = 0.0
    at: float = 0.0
    in_flight: int = 0
    # Publishes waiting for the turn below.
    waiting: int = 0
    # Held by the one publish of a caller in debt (or at MAX_IN_FLIGHT) that goes next.
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Set when one of the caller's publishes leaves the writer.
    left: asyncio.Event = field(default_factory=asyncio.Event)


class WriterPace(CallerDebts[_Caller]):
    """Each caller's debt of writer time, in seconds, and publishes at the writer (see the
    module docstring). Used on the event loop only."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, *,
                 free_seconds: float = FREE_SECONDS, share: float = SHARE,
                 burst_seconds: float = BURST_SECONDS, max_in_flight: int = MAX_IN_FLIGHT,
                 on_wait: Callable[[float], None] = lambda seconds: None) -> None:
        super().__init__(clock, sleep, share, on_wait)
        self._free = free_seconds
        self._burst = burst_seconds
        self._max_in_flight = max_in_flight

    async def enter(self, caller: str) -> bool:
        """Waits until one of the caller's publishes may go to the writer; True when it holds
        the caller's turn. Every `enter` is followed by one `leave`, once the unit ran."""
        if not caller:
            return False
        state = self._callers.get(caller)
        if state is None:
            state = self._callers[caller] = _Caller(at=self._clock())
        if not (state.waiting or state.turn.locked() or state.in_flight >= self._max_in_flight
                or self._drained(state) > 0):
            state.in_flight += 1
            return False
        state.waiting += 1
        try:
            await state.turn.acquire()
        except BaseException:
            state.waiting -= 1
            self._forget_if_idle(caller, state)
            raise
        state.waiting -= 1
        try:
            while state.in_flight >= self._max_in_flight:
                state.left.clear()
                await state.left.wait()
            if (excess := self._drained(state) - self._burst) > 0:
                self._on_wait(excess / self._rate)
                await self._sleep(excess / self._rate)
        except BaseException:
            self._release(caller, state)
            raise
        state.in_flight += 1
        return True

    def leave(self, caller: str, seconds: float, turn: bool) -> None:
        """One of the caller's publishes left the writer, having taken `seconds` of it."""
        if not caller:
            return
        state = self._callers[caller]
        state.in_flight -= 1
        state.debt = self._drained(state) + max(0.0, seconds - self._free)
        state.left.set()
        if turn:
            self._release(caller, state)
        else:
            self._forget_if_idle(caller, state)

    def _release(self, caller: str, state: _Caller) -> None:
        state.turn.release()
        self._forget_if_idle(caller, state)

    def _forget_if_idle(self, caller: str, state: _Caller) -> None:
        """A caller with no debt and no publish at the writer or waiting is not remembered."""
        if not (state.debt or state.in_flight or state.waiting or state.turn.locked()):
            del self._callers[caller]

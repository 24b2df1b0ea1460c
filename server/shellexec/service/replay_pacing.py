"""How much of the durable log one caller's watchers may replay, in bytes a second.

A replay reads the log batch by batch on the reader threads, and every event it yields is then
encoded by the server and, for REST, turned into JSON by Envoy. Sixteen watchers of one token
replaying a 16 MB log from revision 0, over and over (within the 64 feeds a caller may hold),
took about 48 MB a second of that work: another token's GetSession went from a 5 ms p50 to
about 100 ms, with a p99 of 0.5 to 0.7 s.

So each caller's replays share a budget: BURST_BYTES at once, then RATE_BYTES a second. A
replay that reads on (the batch before said the log holds more) reserves a whole batch
(REPLAY_BATCH_BYTES) before it reads one, and waits, one at a time for its caller, until the
caller's debt is back within the burst: however many watchers a caller has, its long replays
read about RATE_BYTES a second. A first read (a watcher's first batch, the short read a live
watcher makes once a heartbeat interval) reserves nothing and does not queue while the
caller's debt is within twice the burst, so a caller's live feeds do not queue behind its own
long replays; past that it queues and reserves like the rest, so a caller reopening feeds to
read only first batches is held to the rate too (its feeds' first reads at once may overshoot
by a batch each, 64 MiB at most).

Each read is charged what its events weigh (`feed.hub.event_weight`: each event, as each is
sent on its own) once it is read. The weight is the texts' size in memory: a text of control
characters, which JSON escapes six bytes to one, sends up to six times its weight through the
REST route. Calls without a token are not paced, as publishes are not (`service.pacing`):
with authentication off every call is the same caller, on loopback. A replica paces its own
watchers. See ADR 0133.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from shellexec.rules.limits import REPLAY_BATCH_BYTES
from shellexec.service.pacing import CallerDebts

# What one caller's replays may send a second, past their burst.
RATE_BYTES = 4 * 1024 * 1024
# What they may send at once: a dashboard opening many feeds of a busy task is not paced.
BURST_BYTES = 32 * 1024 * 1024


@dataclass(slots=True)
class _Caller:
    debt: float = 0.0
    at: float = 0.0
    reading: int = 0
    # Held by the one replay of a caller past its burst that goes next.
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)


class ReplayPace(CallerDebts[_Caller]):
    """Each caller's debt of replayed bytes (see the module docstring). Used on the event
    loop only."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, *,
                 rate_bytes: float = RATE_BYTES, burst_bytes: float = BURST_BYTES,
                 on_wait: Callable[[float], None] = lambda seconds: None) -> None:
        super().__init__(clock, sleep, rate_bytes, on_wait)
        self._burst = burst_bytes

    async def reserve(self, caller: str, *, reading_on: bool) -> int:
        """Waits until the caller may read a batch; returns what it reserved, for `settle`.
        Every `reserve` is followed by one `settle`."""
        if not caller:
            return 0
        self._forget_one_idle()
        state = self._callers.setdefault(caller, _Caller(at=self._clock()))
        state.reading += 1
        try:
            if not reading_on and self._drained(state) <= 2 * self._burst:
                return 0  # a first read, within twice the burst: no queue, no reservation
            bound = self._burst if reading_on else 2 * self._burst
            if self._drained(state) > bound or state.turn.locked():
                async with state.turn:
                    await self._wait_within(state, bound)
            state.debt += REPLAY_BATCH_BYTES
            return REPLAY_BATCH_BYTES
        except BaseException:
            self._leave(caller, state)
            raise

    async def _wait_within(self, state: _Caller, bound: float) -> None:
        while (owed := self._drained(state)) > bound:
            wait = (owed - bound) / self._rate
            self._on_wait(wait)
            await self._sleep(wait)

    def settle(self, caller: str, reserved: int, weight: int | None) -> None:
        """Charges what the batch weighed instead of its reservation; None (its read was
        cancelled, and may still run) charges a whole batch."""
        state = self._callers.get(caller) if caller else None
        if state is None:
            return
        charged = REPLAY_BATCH_BYTES if weight is None else weight
        state.debt = max(0.0, state.debt - reserved + max(charged, 0))
        self._leave(caller, state)

    def _leave(self, caller: str, state: _Caller) -> None:
        state.reading -= 1
        if not state.reading and not self._drained(state) and not state.turn.locked():
            del self._callers[caller]  # nothing owed and nothing reading: forgotten

    def _forget_one_idle(self) -> None:
        """Looks at the caller remembered longest: forgotten if it owes nothing and reads
        nothing now (one that left owing is otherwise kept until it reads again)."""
        for caller, state in self._callers.items():
            if not state.reading and not self._drained(state) and not state.turn.locked():
                del self._callers[caller]
            else:  # looked at: to the back of the line
                self._callers[caller] = self._callers.pop(caller)
            return

"""Taking turns at a shared resource by caller: at most `slots` holders at once, and the
callers waiting for a slot are served one request each, in turn.

A first-come line lets one caller's burst go ahead of everyone else's next request: 64
Normalize calls of one token, half a second each in the conversion worker, held another
caller's large publishes for up to 32 s. Served in turn, the other caller's request waits for
at most one of the burst's.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque


class CallerTurns:
    """Slots handed out one caller at a time (a caller is a token's name; "" is every call
    without one)."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("at least one slot")
        self._slots = slots
        self.holders = 0
        # The callers with requests waiting, in the order they are served next.
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    def waiting(self) -> int:
        return sum(len(line) for line in self._waiting.values())

    async def take(self, caller: str) -> None:
        """Returns once the caller holds a slot; give it back with `give_back`."""
        if self.holders < self._slots and not self._waiting:
            self.holders += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(caller, deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # handed a slot as it was cancelled
                self.give_back()
            else:
                self._forget(caller, turn)
            raise

    def give_back(self) -> None:
        """A holder is done: its slot goes to the next caller in turn."""
        self.holders -= 1
        while self._waiting and self.holders < self._slots:
            caller, line = next(iter(self._waiting.items()))
            turn = line.popleft()
            if line:
                self._waiting.move_to_end(caller)
            else:
                del self._waiting[caller]
            if not turn.done():  # a cancelled one is skipped
                self.holders += 1
                turn.set_result(None)

    def _forget(self, caller: str, turn: asyncio.Future[None]) -> None:
        line = self._waiting.get(caller)
        if line is not None and turn in line:
            line.remove(turn)
            if not line:
                del self._waiting[caller]

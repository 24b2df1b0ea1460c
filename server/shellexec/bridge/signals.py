"""SIGINT and SIGTERM, counted: the first asks the agent to cancel, a later one stops waiting."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable
from typing import TypeVar

from shellexec.bridge.errors import SignalError

T = TypeVar("T")
HANDLED = (signal.SIGINT, signal.SIGTERM)


class Signals:
    """Records the signals received since `install()`, in order."""

    def __init__(self) -> None:
        self.received: list[signal.Signals] = []
        self._arrived = asyncio.Event()

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in HANDLED:
            loop.add_signal_handler(sig, self._on_signal, sig)

    def uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in HANDLED:
            loop.remove_signal_handler(sig)

    @property
    def exit_code(self) -> int | None:
        """128 + the first signal's number (130 for SIGINT), or None without a signal."""
        return 128 + int(self.received[0]) if self.received else None

    def _on_signal(self, sig: signal.Signals) -> None:
        self.received.append(sig)
        self._arrived.set()

    async def wait_beyond(self, count: int) -> signal.Signals:
        """Returns the signal that makes more than `count` received."""
        while len(self.received) <= count:
            self._arrived.clear()
            await self._arrived.wait()
        return self.received[count]

    async def unless_signalled(self, call: Awaitable[T], waiting_for: str) -> T:
        """Awaits `call`, unless a signal beyond those received so far arrives first."""
        work = asyncio.ensure_future(call)
        signalled = asyncio.ensure_future(self.wait_beyond(len(self.received)))
        try:
            await asyncio.wait({work, signalled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            signalled.cancel()
            if not work.done():
                work.cancel()
                await asyncio.wait({work})
        if not work.cancelled():
            return work.result()
        sig = signalled.result()
        raise SignalError(sig.name, 128 + int(sig), waiting_for)

"""SIGINT, SIGTERM and SIGHUP, counted: the first asks the agent to cancel, a later one stops
waiting.

SIGHUP is the terminal closing or an ssh connection dropping: it ended the bridge outright
(exit 129), with the session's turn left open for ever. It is now a cancel like the others.
The terminal is gone by then, so writing to it fails (EIO) and a pipe's reader may be gone
(EPIPE: Python ignores SIGPIPE): the bridge's stderr and stdout take such failures already
(`stdio`), and the run goes on to record its turn. A bridge started with SIGHUP ignored
(`nohup`) keeps ignoring it: it was asked to outlive the terminal."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable
from typing import TypeVar

from shellexec.bridge.errors import SignalError

T = TypeVar("T")
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Signals:
    """Records the signals received since `install()`, in order."""

    def __init__(self) -> None:
        self.received: list[signal.Signals] = []
        self._arrived = asyncio.Event()
        self._installed: list[signal.Signals] = []

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in HANDLED:
            if sig == signal.SIGHUP and signal.getsignal(sig) == signal.SIG_IGN:
                continue  # `nohup`: the hangup stays ignored
            loop.add_signal_handler(sig, self._on_signal, sig)
            self._installed.append(sig)

    def uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    @property
    def exit_code(self) -> int | None:
        """128 + the first signal's number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP),
        or None without a signal."""
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

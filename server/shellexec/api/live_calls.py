"""The calls the server is running, so that a stopping server knows when its own are done
(ADR 0144).

gRPC's `stop(grace)` waits for every call its core holds, and grpcio can lose a call that
arrives as the server stops: the core hands it to a request that grpc.aio then cancels, so no
task ever runs it, and the stop waits out the whole grace for it. `LiveCalls` counts what gRPC
did hand over, from the moment the interceptors see a call until its task ends. That task ends
only after the call's status went out, so once none is left, nothing a caller waits on is cut
by cancelling what the core still holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc

from shellexec.api.handlers import when_call_ends

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]]


class LiveCalls(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc is untyped
    """Counts each call from its first interceptor until its task is done."""

    def __init__(self) -> None:
        self._running = 0
        self._arrived = 0  # every call seen so far: tells a quiet spell from a busy one
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def running(self) -> int:
        """How many calls are running now."""
        return self._running

    async def intercept_service(self, continuation: Continuation,
                                handler_call_details: grpc.HandlerCallDetails
                                ) -> grpc.RpcMethodHandler:
        self._running += 1
        self._arrived += 1
        self._idle.clear()
        when_call_ends(self._ended)
        return await continuation(handler_call_details)

    def _ended(self) -> None:
        self._running -= 1
        if not self._running:
            self._idle.set()

    async def quiet(self, settle_seconds: float) -> None:
        """Returns once no call has run, nor arrived, for `settle_seconds`.

        The spell covers a call gRPC has handed over whose task has not reached the
        interceptors yet: it does so within a turn or two of the event loop."""
        while True:
            await self._idle.wait()
            arrived = self._arrived
            await asyncio.sleep(settle_seconds)
            if not self._running and self._arrived == arrived:
                return

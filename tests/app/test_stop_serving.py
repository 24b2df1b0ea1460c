"""A stopping server lets its running calls finish, and waits for nothing else (ADR 0144).

Each test runs a real grpc.aio server on loopback with a handler that blocks until the test
lets it go, and a real client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import grpc
import pytest

from shellexec.api.live_calls import LiveCalls
from shellexec.app.server import stop_serving

# Far past anything these tests wait for: a stop that waited it out would fail them.
GRACE_SECONDS = 120.0
TIMEOUT_SECONDS = 30.0
METHOD = "/shellexec.test.Blocking/Call"


@dataclass
class _Blocking:
    """A handler that tells when a call reached it and answers once released."""

    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def call(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        self.arrived.set()
        await self.release.wait()
        return b"answered " + request


@asynccontextmanager
async def _serving(interceptors: list[grpc.aio.ServerInterceptor], handler: _Blocking
                   ) -> AsyncIterator[tuple[grpc.aio.Server, Callable[[], Awaitable[bytes]]]]:
    server = grpc.aio.server(interceptors=interceptors)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "shellexec.test.Blocking", {"Call": grpc.unary_unary_rpc_method_handler(handler.call)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(METHOD)
        try:
            yield server, lambda: call(b"ping", timeout=TIMEOUT_SECONDS)
        finally:
            await server.stop(0)


def test_a_call_running_when_the_server_stops_gets_its_answer() -> None:
    async def check() -> None:
        live, handler = LiveCalls(), _Blocking()
        async with _serving([live], handler) as (server, call):
            answer = asyncio.ensure_future(call())
            await asyncio.wait_for(handler.arrived.wait(), TIMEOUT_SECONDS)
            stopping = asyncio.ensure_future(stop_serving(server, live, GRACE_SECONDS,
                                                          settle_seconds=0.01))
            # Long past the settle spell: the running call keeps the stop waiting.
            await asyncio.sleep(0.2)
            assert not stopping.done()
            assert live.running == 1
            handler.release.set()
            assert await asyncio.wait_for(answer, TIMEOUT_SECONDS) == b"answered ping"
            await asyncio.wait_for(stopping, TIMEOUT_SECONDS)
            assert live.running == 0

    asyncio.run(check())


def test_a_call_no_counted_task_runs_does_not_hold_the_stop_for_the_grace() -> None:
    # The stand-in for a call gRPC lost as it stopped: the core holds it, but the live calls
    # never saw it (they are not among the server's interceptors here).
    async def check() -> None:
        live, handler = LiveCalls(), _Blocking()
        async with _serving([], handler) as (server, call):
            held = asyncio.ensure_future(call())
            await asyncio.wait_for(handler.arrived.wait(), TIMEOUT_SECONDS)
            await asyncio.wait_for(stop_serving(server, live, GRACE_SECONDS,
                                                settle_seconds=0.01), TIMEOUT_SECONDS)
            with pytest.raises(grpc.aio.AioRpcError) as cut:  # as gRPC cuts it at the grace
                await held
            assert cut.value.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)

    asyncio.run(check())


def test_the_live_calls_are_quiet_only_once_every_counted_call_has_ended() -> None:
    async def check() -> None:
        live = LiveCalls()
        release = asyncio.Event()
        running = asyncio.ensure_future(_counted(live, release))
        await asyncio.sleep(0)
        assert live.running == 1
        settled = asyncio.ensure_future(live.quiet(0.001))
        await asyncio.sleep(0.1)  # a hundred spells: a running call keeps it from settling
        assert not settled.done()
        release.set()
        await running
        await asyncio.wait_for(settled, TIMEOUT_SECONDS)
        assert live.running == 0

    asyncio.run(check())


@dataclass(frozen=True)
class _Details:
    """What gRPC tells the interceptors of a call."""

    method: str = METHOD
    invocation_metadata: tuple[tuple[str, str], ...] = ()


async def _counted(live: LiveCalls, release: asyncio.Event) -> None:
    """What a call's task does: passes the interceptor, then runs until released."""
    async def continuation(_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(lambda request, context: request)

    await live.intercept_service(continuation, _Details())
    await release.wait()

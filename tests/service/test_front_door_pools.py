"""The front door carries calls to the servers in four pools, each bounded on its own
(FRONT_DOOR_POOL_STREAMS_PER_REPLICA streams at once per replica, ADR 0139): unary calls, the
feeds, health checks, and the streams a client may hold open for as long as it likes (health
watches, reflection). A client holding a pool's every stream is refused its next one there,
in words that say the pool is full, and nobody is refused anything elsewhere.

Before the pools were split, one pool carried unary calls, health and reflection: a client
holding 1,024 health watches (which need no token) made every API call through the front door
503 for everyone."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.app.front_door_errors import POOL_FULL
from shellexec.client import AsyncShellExecClient
from shellexec.rules.limits import (
    FRONT_DOOR_POOL_STREAMS_PER_REPLICA,
    FRONT_DOOR_STREAMS_PER_CONNECTION,
    MAX_WAITING_CALLS_PER_CALLER,
    MAX_WATCHERS_PER_CALLER,
)
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.reflection import refused_reflection
from support.rest import unique
from support.stack import Stack

# The server's engine plays no part here.
pytestmark = pytest.mark.sqlite_only

SERVING = health_pb2.HealthCheckResponse.SERVING
# Bounds a broken front door's wait; a working one answers at once.
TIMEOUT_SECONDS = 30
# Connections that carry the held streams: each carries at most
# FRONT_DOOR_STREAMS_PER_CONNECTION at once, and gRPC would queue the rest unsent.
HOLDING_CONNECTIONS = -(-FRONT_DOOR_POOL_STREAMS_PER_REPLICA // FRONT_DOOR_STREAMS_PER_CONNECTION)


def _connection(stack: Stack) -> grpc.aio.Channel:
    """A channel with a connection of its own (gRPC shares them between channels by
    default)."""
    return grpc.aio.insecure_channel(f"127.0.0.1:{stack.rest_port}",
                                     options=[("grpc.use_local_subchannel_pool", 1)])


async def _health_watch(channel: grpc.aio.Channel) -> grpc.aio.Call:
    """A health Watch that the server has answered, held open."""
    call = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
    answer = await asyncio.wait_for(call.read(), TIMEOUT_SECONDS)
    assert answer.status == SERVING
    return call


async def _refused_as_full(opening: Awaitable[object]) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await opening
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == POOL_FULL


@contextlib.asynccontextmanager
async def _connections(stack: Stack, count: int) -> AsyncIterator[list[grpc.aio.Channel]]:
    """`count` channels of their own connection each, closed after (which ends their
    streams)."""
    channels = [_connection(stack) for _ in range(count)]
    try:
        yield channels
    finally:
        for channel in channels:
            await channel.close()


@contextlib.asynccontextmanager
async def _held_streams(stack: Stack) -> AsyncIterator[None]:
    """The pool of held streams full of health watches (the server itself serves at most
    MAX_REQUEST_STREAMS reflection streams at once, ADR 0140; they share this pool). At most
    half of MAX_WAITING_CALLS_PER_CALLER are opened at once: the server refuses a caller more
    calls still waiting for their messages (ADR 0140), and 1,024 opened together on a loaded
    machine were (RESOURCE_EXHAUSTED), which is not what this test is about."""
    opening = asyncio.Semaphore(MAX_WAITING_CALLS_PER_CALLER // 2)

    async def held(channel: grpc.aio.Channel) -> grpc.aio.Call:
        async with opening:
            return await _health_watch(channel)

    async with _connections(stack, HOLDING_CONNECTIONS) as channels:
        calls = await asyncio.gather(*(
            held(channels[index % len(channels)])
            for index in range(FRONT_DOOR_POOL_STREAMS_PER_REPLICA)))
        yield
        for call in calls:
            call.cancel()


async def _every_other_pool_serves(stack: Stack) -> None:
    created = await asyncio.to_thread(stack.api.new_session)  # raises unless 200
    assert created["state"] == "idle"
    async with AsyncShellExecClient(f"127.0.0.1:{stack.rest_port}") as client:
        session = await client.create_session(unique("pools"))
        feed = client.watch(session.id)
        first = await asyncio.wait_for(anext(feed), TIMEOUT_SECONDS)
        assert first.type == "heartbeat"
        await feed.aclose()
    async with _connection(stack) as channel:
        answer = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_SECONDS)
        assert answer.status == SERVING


async def _check_pools(stack: Stack) -> None:
    async with _held_streams(stack):
        async with _connection(stack) as channel:
            await _refused_as_full(_health_watch(channel))
            await _refused_as_full(refused_reflection(channel, TIMEOUT_SECONDS))
        await _every_other_pool_serves(stack)
    # The held streams' places come back once Envoy sees them reset.
    deadline = time.monotonic() + TIMEOUT_SECONDS
    async with _connection(stack) as channel:
        while time.monotonic() < deadline:
            with contextlib.suppress(grpc.aio.AioRpcError):
                (await _health_watch(channel)).cancel()
                return
            await asyncio.sleep(0.1)
    pytest.fail("the pool's places did not come back after its streams ended")


def test_streams_held_in_one_pool_refuse_no_call_of_another(stack: Stack) -> None:
    asyncio.run(_check_pools(stack))


async def _feed(channel: grpc.aio.Channel, session_id: str, token: str) -> grpc.aio.Call:
    """A feed the server has answered (every stream opens with a heartbeat), held open."""
    call = pb_grpc.ShellExecServiceStub(channel).WatchMessages(
        pb.WatchMessagesRequest(session_id=session_id),
        metadata=(("authorization", f"Bearer {token}"),))
    first = await asyncio.wait_for(call.read(), TIMEOUT_SECONDS)
    assert first.type == "heartbeat"
    return call


async def _check_feed_pool(stack: Stack, session_id: str, tokens: list[str], late: str) -> None:
    async with _connections(stack, HOLDING_CONNECTIONS + 1) as channels:
        held = await asyncio.gather(*(
            _feed(channels[index % HOLDING_CONNECTIONS], session_id,
                  tokens[index // MAX_WATCHERS_PER_CALLER])
            for index in range(FRONT_DOOR_POOL_STREAMS_PER_REPLICA)))
        await _refused_as_full(_feed(channels[-1], session_id, late))
        refused = await asyncio.to_thread(
            stack.api_as(late).request, "GET",
            f"/api/v1/task-sessions/{session_id}/messages:watch")
        assert refused.status == 503
        assert refused.json() == {"code": 14, "message": POOL_FULL}
        session = await asyncio.to_thread(stack.api_as(late).session, session_id)
        assert session["id"] == session_id  # unary calls have their own pool
        for call in held:
            call.cancel()


def test_callers_at_their_bound_of_feeds_fill_the_feed_pool_and_are_told_so(
        stack_with: Callable[..., Stack]) -> None:
    """The feed pool is shared by the callers that watch (ADR 0135's bound is per caller):
    enough tokens at their bound fill it. A further feed is refused as the pool being full,
    over gRPC and REST, in words that say so; other calls are served."""
    stack = stack_with(SHELLEXEC_AUTH="on")
    writer = stack.create_token(unique("writer"), "ingest")
    session_id = stack.api_as(writer).new_session()["id"]
    callers = -(-FRONT_DOOR_POOL_STREAMS_PER_REPLICA // MAX_WATCHERS_PER_CALLER)
    tokens = [stack.create_token(unique("watcher"), "read") for _ in range(callers)]
    asyncio.run(_check_feed_pool(stack, session_id, tokens,
                                 stack.create_token(unique("late"), "read")))

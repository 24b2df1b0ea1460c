"""What the server holds of requests at once is bounded, whatever clients send (ADR 0140).

gRPC reads a call's whole message, up to 16 MiB for any method, before a handler sees it.
Before the request budget, 300 GetSession calls carrying 15 MB of unknown fields each, sent at
once through the front door, grew the server to 9 GB: every message was read at once, and each
refused call's request stayed referenced (through the abort's exception) until the garbage
collector's next full pass. Now a call reserves a message's worth before its message is read
and waits, unread, while that does not fit; callers at their share wait without holding up
the others; and request streams (reflection), which would hold a reservation while idle, are
bounded in number instead."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.client._values import to_protobuf_value
from shellexec.rules.limits import (
    MAX_GRPC_MESSAGE_BYTES,
    MAX_REQUEST_STREAMS,
    MAX_STREAM_REQUEST_BYTES,
    MAX_WAITING_CALLS_PER_CALLER,
    REQUEST_BUDGET_BYTES,
    REQUEST_BUDGET_BYTES_PER_CALLER,
)
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.memory import peak_rss_kib
from support.metrics import scrape, value
from support.reflection import held_reflection, refused_reflection
from support.rest import unique
from support.stack import Stack, free_port

# The server's engine plays no part here.
pytestmark = pytest.mark.sqlite_only

SERVICE = "/shellexec.v1.ShellExecService"
TIMEOUT_SECONDS = 120
# Large calls sent at once, and the bytes of unknown fields each carries: 1.9 GB in all, which
# a server reading every message at once would hold.
LARGE_CALLS = 160
LARGE_CALL_BYTES = 12_000_000
# Bytes of each delta in a Normalize request of the flood, and how many such updates it has:
# about 7 MB, and slow enough to convert that the flood's calls queue for the worker.
FLOOD_DELTA_BYTES = 7_000
FLOOD_UPDATES = 999
FLOOD_CALLS = 40


def _channel(target: str) -> grpc.aio.Channel:
    """A channel of its own connection that may send the largest message."""
    return grpc.aio.insecure_channel(target, options=[
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.max_send_message_length", MAX_GRPC_MESSAGE_BYTES)])


@contextlib.asynccontextmanager
async def _channels(target: str, count: int) -> AsyncIterator[list[grpc.aio.Channel]]:
    channels = [_channel(target) for _ in range(count)]
    try:
        yield channels
    finally:
        for channel in channels:
            await channel.close()


def _with_unknown_field(request: bytes, size: int) -> bytes:
    """`request` followed by field 999 (unknown to every request) holding `size` bytes."""
    def varint(number: int) -> bytes:
        out = bytearray()
        while True:
            low, number = number & 0x7F, number >> 7
            out.append(low | (0x80 if number else 0))
            if not number:
                return bytes(out)

    return request + varint((999 << 3) | 2) + varint(size) + b"z" * size


async def _large_calls(target: str) -> list[str]:
    request = _with_unknown_field(
        pb.GetSessionRequest(session_id="ses_" + "0" * 32).SerializeToString(),
        LARGE_CALL_BYTES)
    async with _channels(target, 4) as channels:
        calls = [channel.unary_unary(f"{SERVICE}/GetSession") for channel in channels]
        answers = await asyncio.gather(*(
            calls[index % len(calls)](request, timeout=TIMEOUT_SECONDS)
            for index in range(LARGE_CALLS)), return_exceptions=True)
    return [answer.code().name if isinstance(answer, grpc.aio.AioRpcError) else "OK"
            for answer in answers]


@pytest.mark.slow
def test_many_large_calls_at_once_leave_the_server_small(
        stack_with: Callable[..., Stack]) -> None:
    """Each call is answered (its session does not exist), and the server's peak resident
    memory grows by a small multiple of the budget, far below what the calls sent."""
    stack = stack_with()
    assert stack.server is not None
    before = peak_rss_kib(stack.server.pid)
    codes = asyncio.run(_large_calls(f"127.0.0.1:{stack.rest_port}"))
    grown = (peak_rss_kib(stack.server.pid) - before) * 1024
    assert codes == ["NOT_FOUND"] * LARGE_CALLS
    assert grown < 4 * REQUEST_BUDGET_BYTES < LARGE_CALLS * LARGE_CALL_BYTES / 3, grown


async def _check_request_streams(stack: Stack) -> None:
    async with _channels(stack.grpc_target, 2) as (holding, other):
        held = [await held_reflection(holding, TIMEOUT_SECONDS)
                for _ in range(MAX_REQUEST_STREAMS)]
        assert value(scrape(stack), "shellexec_request_streams") == MAX_REQUEST_STREAMS
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await refused_reflection(other, TIMEOUT_SECONDS)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert f"already serves {MAX_REQUEST_STREAMS} request streams" in (
            refused.value.details() or "")
        # Calls with one request are not request streams.
        answer = await health_pb2_grpc.HealthStub(other).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_SECONDS)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        # A call the authenticator refuses reads nothing, and is no request stream either.
        with pytest.raises(grpc.aio.AioRpcError) as unauthenticated:
            await other.unary_unary(f"{SERVICE}/ListSessions")(
                pb.ListSessionsRequest().SerializeToString(), timeout=TIMEOUT_SECONDS)
        assert unauthenticated.value.code() == grpc.StatusCode.UNAUTHENTICATED
        ending = held.pop()
        await ending.done_writing()
        assert await asyncio.wait_for(ending.read(), TIMEOUT_SECONDS) == grpc.aio.EOF
        for _ in range(100):
            with contextlib.suppress(grpc.aio.AioRpcError):
                held.append(await held_reflection(other, TIMEOUT_SECONDS))
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("no request stream was served again after one ended")
        for call in held:
            call.cancel()


def test_request_streams_beyond_their_bound_are_refused_until_one_ends(
        stack_with: Callable[..., Stack]) -> None:
    stack = stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_METRICS_PORT=str(free_port()))
    asyncio.run(_check_request_streams(stack))


async def _check_stream_requests(stack: Stack, session_id: str) -> None:
    async with _channels(f"127.0.0.1:{stack.rest_port}", 1) as (channel,):
        watch = channel.unary_stream(f"{SERVICE}/WatchMessages",
                                     response_deserializer=pb.WatchMessagesResponse.FromString)
        request = pb.WatchMessagesRequest(session_id=session_id).SerializeToString()
        oversized = _with_unknown_field(request, MAX_STREAM_REQUEST_BYTES)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await watch(oversized, timeout=TIMEOUT_SECONDS).read()
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details() == (
            f"request: is {len(oversized)} bytes; a request that opens a stream may be at "
            f"most {MAX_STREAM_REQUEST_BYTES}")
        feeds = [watch(request, timeout=TIMEOUT_SECONDS) for _ in range(8)]
        for feed in feeds:
            assert (await feed.read()).type == "heartbeat"
        assert value(scrape(stack), "shellexec_request_bytes") == 0
        for feed in feeds:
            feed.cancel()


def test_a_stream_request_is_bounded_and_holds_nothing_in_the_budget(
        stack_with: Callable[..., Stack]) -> None:
    """A feed lives for as long as its client likes, and its request with it: the request
    is bounded by size instead, and open feeds leave the budget to the calls."""
    stack = stack_with(SHELLEXEC_METRICS_PORT=str(free_port()))
    session_id = stack.api.new_session()["id"]
    asyncio.run(_check_stream_requests(stack, session_id))


def _flood_request() -> bytes:
    updates = [{"sessionUpdate": "tool_call", "toolCallId": "call", "kind": "execute",
                "rawInput": {"command": "make"}}]
    updates += [{"sessionUpdate": "tool_call_update", "toolCallId": "call",
                 "_meta": {"terminal_output_delta": {"data": f"{index:06d}" + "y" * (
                     FLOOD_DELTA_BYTES - 6)}}} for index in range(FLOOD_UPDATES)]
    request = pb.NormalizeShellExecRequest(
        updates=[to_protobuf_value(update) for update in updates])
    return bytes(request.SerializeToString())


async def _wait_for_waiting(stack: Stack, at_least: int) -> None:
    for _ in range(600):
        if value(scrape(stack), "shellexec_requests_waiting") >= at_least:
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"fewer than {at_least} calls ever waited for the request budget")


async def _check_fair_waiting(stack: Stack, flood: str, other: str, session_id: str) -> None:
    request = _flood_request()
    async with _channels(f"127.0.0.1:{stack.rest_port}", 1) as (channel,):
        normalize = channel.unary_unary(f"{SERVICE}/NormalizeShellExec")
        calls = [asyncio.ensure_future(normalize(
            request, timeout=TIMEOUT_SECONDS,
            metadata=(("authorization", f"Bearer {flood}"),))) for _ in range(FLOOD_CALLS)]
        try:
            await _wait_for_waiting(stack, 4)
            session = await asyncio.to_thread(stack.api_as(other).session, session_id)
            assert session["id"] == session_id
            # Answered while the flood's calls still wait: it went past them.
            assert value(scrape(stack), "shellexec_requests_waiting") > 0
            answers = await asyncio.gather(*calls)
            assert all(answers)  # every waiting call was served in the end
        finally:
            for call in calls:
                call.cancel()


@pytest.mark.slow
def test_a_caller_at_its_share_waits_without_holding_up_another(
        stack_with: Callable[..., Stack]) -> None:
    """One token floods large Normalize calls, which queue for the conversion worker and
    hold its share of the budget; another token's call is served at once."""
    stack = stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_METRICS_PORT=str(free_port()))
    flood = stack.create_token(unique("flood"), "ingest")
    other = stack.create_token(unique("other"), "ingest", "read")
    session_id = stack.api_as(other).new_session()["id"]
    asyncio.run(_check_fair_waiting(stack, flood, other, session_id))


async def _check_waiting_bound(stack: Stack, target: str, method: str, token: str | None,
                               other: str, session_id: str) -> str:
    """Opens more calls of `method` (with `token`, or none) than may wait, sending headers and
    never a message; checks that `other`'s call is answered meanwhile and that no more than
    the bound wait; returns the refusal the calls past the bound got."""
    stop = asyncio.Event()

    async def never_sent() -> AsyncIterator[bytes]:
        await stop.wait()
        yield b""  # pragma: no cover - the calls end before

    held = MAX_WAITING_CALLS_PER_CALLER + REQUEST_BUDGET_BYTES_PER_CALLER // (
        MAX_GRPC_MESSAGE_BYTES) + 16
    per_channel = 200  # below the streams the front door allows one connection
    metadata = () if token is None else (("authorization", f"Bearer {token}"),)
    async with _channels(target, -(-held // per_channel)) as channels:
        calls_of = [channel.stream_unary(method) for channel in channels]
        calls = [asyncio.ensure_future(calls_of[index // per_channel](
            never_sent(), timeout=TIMEOUT_SECONDS, metadata=metadata)) for index in range(held)]
        try:
            refused = await asyncio.wait_for(next(asyncio.as_completed(calls)), TIMEOUT_SECONDS)
        except grpc.aio.AioRpcError as error:
            refused = error
        finally:
            try:
                session = await asyncio.to_thread(stack.api_as(other).session, session_id)
                assert session["id"] == session_id
                assert value(scrape(stack), "shellexec_requests_waiting") <= (
                    MAX_WAITING_CALLS_PER_CALLER)
            finally:
                stop.set()
                for call in calls:
                    call.cancel()
    assert isinstance(refused, grpc.aio.AioRpcError)
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    return str(refused.details())


@pytest.mark.slow
def test_one_token_s_calls_waiting_for_room_are_bounded(
        stack_with: Callable[..., Stack]) -> None:
    """Streams that sent their headers and never a message filled the front door's pool of
    unary calls from one token: nine in ten of every other caller's calls answered 503."""
    stack = stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_METRICS_PORT=str(free_port()))
    holder = stack.create_token(unique("holder"), "read")
    other = stack.create_token(unique("other"), "ingest", "read")
    session_id = stack.api_as(other).new_session()["id"]
    refused = asyncio.run(_check_waiting_bound(
        stack, f"127.0.0.1:{stack.rest_port}", f"{SERVICE}/GetSession", holder, other,
        session_id))
    assert f"{MAX_WAITING_CALLS_PER_CALLER} of this token's calls already wait" in refused


@pytest.mark.slow
def test_the_calls_without_a_token_waiting_for_room_are_bounded(
        stack_with: Callable[..., Stack]) -> None:
    """With authentication on, health checks need no token. Sent to the gRPC port with their
    headers and never their message, the first few held the tokenless line of the budget and
    the rest waited without bound, until they filled every call the server may run: a token
    holder's call got RESOURCE_EXHAUSTED "Concurrent RPC limit exceeded!"."""
    stack = stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_METRICS_PORT=str(free_port()))
    other = stack.create_token(unique("other"), "ingest", "read")
    session_id = stack.api_as(other).new_session()["id"]
    refused = asyncio.run(_check_waiting_bound(
        stack, stack.grpc_target, "/grpc.health.v1.Health/Check", None, other, session_id))
    assert f"{MAX_WAITING_CALLS_PER_CALLER} of the calls without a token already wait" in (
        refused)

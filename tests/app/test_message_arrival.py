"""A call whose message does not arrive in time is cancelled, and its reservation of the
request budget given back (ADR 0140): calls that sent their headers and never a message held
a caller's whole share, and every other call of that caller waited for as long as their
client liked. On a real grpc.aio server with the budget's interceptor, with a short wait."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from shellexec.api.request_budget import RequestBudget, RequestBudgetInterceptor
from shellexec.v1 import session_pb2
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.stack import Stack

MESSAGE = 1024 * 1024
ARRIVAL_SECONDS = 0.5
METHOD = "/shellexec.v1.ShellExecService/GetSession"


class Answering(pb_grpc.ShellExecServiceServicer):  # type: ignore[misc]
    async def GetSession(self, request: pb.GetSessionRequest,  # noqa: N802
                         context: Any) -> pb.GetSessionResponse:
        return pb.GetSessionResponse(session=session_pb2.Session(id=request.session_id))


def _withheld(release: threading.Event) -> Iterator[bytes]:
    """A request stream that sends no message until released: the call's headers go out,
    its message never does."""
    release.wait()
    yield from ()


def test_calls_whose_message_never_comes_are_cancelled_and_others_then_get_in() -> None:
    async def serve(ready: asyncio.Future[int], done: asyncio.Event) -> None:
        budget = RequestBudget(4 * MESSAGE, 2 * MESSAGE, MESSAGE)  # a share: two calls
        server = grpc.aio.server(interceptors=[
            RequestBudgetInterceptor(budget, 4, arrival_seconds=ARRIVAL_SECONDS)])
        pb_grpc.add_ShellExecServiceServicer_to_server(Answering(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        ready.set_result(port)
        await done.wait()
        await server.stop(None)
        assert budget.held == 0

    loop = asyncio.new_event_loop()
    ready: asyncio.Future[int] = loop.create_future()
    done = asyncio.Event()
    serving = threading.Thread(target=loop.run_until_complete, args=(serve(ready, done),))
    serving.start()
    release = threading.Event()
    try:
        port = asyncio.run_coroutine_threadsafe(asyncio.wait_for(
            asyncio.shield(ready), 10), loop).result()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            holding = channel.stream_unary(METHOD, request_serializer=bytes,
                                           response_deserializer=bytes)
            held = [holding.future(_withheld(release)) for _ in range(2)]
            # Two reservations fill the one caller's share: this call waits for one of them.
            # Without the cancellation it waited for as long as they were held: here, until
            # the timeout failed the test.
            answer = pb_grpc.ShellExecServiceStub(channel).GetSession(
                pb.GetSessionRequest(session_id="ses_honest"), timeout=30)
            assert answer.session.id == "ses_honest"
            assert all(call.exception(timeout=30) is not None for call in held)
            assert {call.exception().code() for call in held} == {
                grpc.StatusCode.DEADLINE_EXCEEDED}
    finally:
        release.set()
        loop.call_soon_threadsafe(done.set)
        serving.join(timeout=30)


def test_a_call_whose_stream_closes_without_its_message_is_invalid(stack: Stack) -> None:
    """gRPC left such a call open for ever, holding its reservation; the real server now
    answers it."""
    with grpc.insecure_channel(stack.grpc_target) as channel:
        empty = channel.stream_unary(METHOD, request_serializer=bytes,
                                     response_deserializer=bytes)
        with pytest.raises(grpc.RpcError) as refused:
            empty(iter(()), timeout=30)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith("request: the call ended without its message")

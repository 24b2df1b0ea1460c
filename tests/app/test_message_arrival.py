"""A call whose message does not arrive in time is cancelled, and its reservation of the
request budget given back (ADR 0140): calls that sent their headers and never a message held
a caller's whole share, and every other call of that caller waited for as long as their
client liked. On a real grpc.aio server with the budget's interceptor, with a short wait."""

from __future__ import annotations

import asyncio
import http.client
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest

from shellexec.api.request_budget import Admission, RequestBudget, RequestBudgetInterceptor
from shellexec.app import server as server_module
from shellexec.app.server import start_server
from shellexec.app.settings import Settings
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


@contextmanager
def _serving(servicer: Answering, budget: RequestBudget, arrival_seconds: float
             ) -> Iterator[tuple[int, asyncio.AbstractEventLoop]]:
    """A grpc.aio server of `servicer` behind the budget's interceptor, on a loop of its own
    in a thread: its port and its loop, stopped after."""
    async def serve(ready: asyncio.Future[int], done: asyncio.Event) -> None:
        server = grpc.aio.server(interceptors=[
            RequestBudgetInterceptor(budget, 4, arrival_seconds=arrival_seconds)])
        pb_grpc.add_ShellExecServiceServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        ready.set_result(port)
        await done.wait()
        await server.stop(None)

    loop = asyncio.new_event_loop()
    ready: asyncio.Future[int] = loop.create_future()
    done = asyncio.Event()
    serving = threading.Thread(target=loop.run_until_complete, args=(serve(ready, done),))
    serving.start()
    try:
        yield asyncio.run_coroutine_threadsafe(asyncio.wait_for(
            asyncio.shield(ready), 10), loop).result(), loop
    finally:
        loop.call_soon_threadsafe(done.set)
        serving.join(timeout=30)
        loop.close()


def test_calls_whose_message_never_comes_are_cancelled_and_others_then_get_in() -> None:
    budget = RequestBudget(4 * MESSAGE, 2 * MESSAGE, MESSAGE)  # a share: two calls
    release = threading.Event()
    try:
        with _serving(Answering(), budget, ARRIVAL_SECONDS) as (port, _), \
                grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
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
    assert budget.held == 0


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


def test_a_server_runs_at_most_its_bound_of_calls_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its own gRPC port bounded nothing: 20,000 calls that never sent their message grew the
    server by 380 MB. With a bound of three, a fourth call is refused at once, and calls are
    served again once those end."""
    monkeypatch.setattr(server_module, "MAX_SERVER_CALLS", 3)
    settings = Settings(grpc_address="127.0.0.1:0",
                        database_url=f"sqlite:///{tmp_path / 'bound.db'}")

    async def check() -> None:
        running = await start_server(settings)
        release = threading.Event()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
                holding = channel.stream_unary(METHOD, request_serializer=bytes,
                                               response_deserializer=bytes)
                held = [holding(_withheld_async(release)) for _ in range(3)]
                for call in held:  # their headers are sent, ahead of the next call's
                    await call.wait_for_connection()
                stub = pb_grpc.ShellExecServiceStub(channel)
                request = pb.GetSessionRequest(session_id="ses_x")
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.GetSession(request, timeout=10)
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                release.set()  # the three end, refused as empty
                for call in held:
                    with pytest.raises(grpc.aio.AioRpcError):
                        await call
                with pytest.raises(grpc.aio.AioRpcError) as served:
                    await stub.GetSession(request, timeout=10)
                assert served.value.code() == grpc.StatusCode.NOT_FOUND  # served, and answered
        finally:
            release.set()
            await running.stop(1)

    asyncio.run(check())


async def _withheld_async(release: threading.Event) -> AsyncIterator[bytes]:
    while not release.is_set():
        await asyncio.sleep(0.05)
    return
    yield b""  # pragma: no cover - makes this an async generator


def test_an_empty_grpc_web_call_through_the_front_door_is_answered_at_once(
        stack: Stack) -> None:
    """It waited for Envoy's route timeout, 60 s, and got a 504."""
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=30)
    try:
        connection.request("POST", METHOD, body=b"",
                           headers={"content-type": "application/grpc-web+proto"})
        answer = connection.getresponse()
        answer.read()
    finally:
        connection.close()
    assert answer.status == 200
    assert answer.getheader("grpc-status") == "3"  # INVALID_ARGUMENT
    assert answer.getheader("grpc-message") == "request: the call ended without its message"


def _one_message_then(release: threading.Event, message: bytes) -> Iterator[bytes]:
    """A request stream that sends its message and ends only once released."""
    yield message
    release.wait()


def test_a_call_is_answered_only_once_its_client_ended_the_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A call answered as soon as its message was read, before the client's END_STREAM, had
    the front door reset the client's stream and drop what it held of a large answer
    (tests/service/test_early_answer.py). Here the servicer must not run between the read of
    the message and the end of the request: the check runs on the server's loop in the turn
    after the read, when an answer made at once would have been."""
    read = threading.Event()
    arrived = Admission.arrived

    def noting(admission: Admission, size: int) -> None:
        arrived(admission, size)
        read.set()

    monkeypatch.setattr(Admission, "arrived", noting)
    answered = threading.Event()

    class Noting(Answering):
        async def GetSession(self, request: pb.GetSessionRequest,  # noqa: N802
                             context: Any) -> pb.GetSessionResponse:
            answered.set()
            return await super().GetSession(request, context)

    async def answered_yet() -> bool:
        return answered.is_set()

    release = threading.Event()
    budget = RequestBudget(4 * MESSAGE, 2 * MESSAGE, MESSAGE)
    try:
        with _serving(Noting(), budget, 30) as (port, loop), \
                grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.stream_unary(METHOD, request_serializer=bytes,
                                        response_deserializer=pb.GetSessionResponse.FromString)
            message = pb.GetSessionRequest(session_id="ses_waiting").SerializeToString()
            answer = call.future(_one_message_then(release, message), timeout=60)
            assert read.wait(timeout=30)
            assert not asyncio.run_coroutine_threadsafe(answered_yet(), loop).result(timeout=30)
            release.set()
            assert answer.result(timeout=30).session.id == "ses_waiting"
    finally:
        release.set()


def test_a_call_holds_its_reservation_until_its_client_ended_the_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Settled at its message, a call gave its reservation back while gRPC went on to read a
    second message of up to the message limit, unbudgeted (a review: 24 such calls took
    398 MB). Two calls that sent a small message and have not ended hold their whole
    reservations, so a caller's third call waits; once they end, it is served."""
    read = threading.Semaphore(0)
    arrived = Admission.arrived

    def noting(admission: Admission, size: int) -> None:
        arrived(admission, size)
        read.release()

    monkeypatch.setattr(Admission, "arrived", noting)
    budget = RequestBudget(4 * MESSAGE, 2 * MESSAGE, MESSAGE)  # a share: two calls
    release = threading.Event()
    message = pb.GetSessionRequest(session_id="ses_small").SerializeToString()

    async def held() -> int:
        return budget.held

    try:
        with _serving(Answering(), budget, 30) as (port, loop), \
                grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            calls = channel.stream_unary(METHOD, request_serializer=bytes,
                                         response_deserializer=bytes)
            open_calls = [calls.future(_one_message_then(release, message), timeout=60)
                          for _ in range(2)]
            assert read.acquire(timeout=30)
            assert read.acquire(timeout=30)
            assert asyncio.run_coroutine_threadsafe(held(), loop).result(timeout=30) == \
                2 * MESSAGE
            release.set()
            assert all(call.result(timeout=30) for call in open_calls)
    finally:
        release.set()
    assert budget.held == 0


def test_a_call_whose_request_never_ends_is_told_so() -> None:
    budget = RequestBudget(4 * MESSAGE, 2 * MESSAGE, MESSAGE)
    release = threading.Event()
    message = pb.GetSessionRequest(session_id="ses_never_ends").SerializeToString()
    try:
        with _serving(Answering(), budget, ARRIVAL_SECONDS) as (port, _), \
                grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            calls = channel.stream_unary(METHOD, request_serializer=bytes,
                                         response_deserializer=bytes)
            with pytest.raises(grpc.RpcError) as ended:
                calls(_one_message_then(release, message), timeout=30)
    finally:
        release.set()
    assert ended.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert ended.value.details() == f"request: did not end within {ARRIVAL_SECONDS:g} s"

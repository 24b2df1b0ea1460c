"""Anything unexpected is logged in its call's JSON line (request id, method, status, never the
failure's text) and answered INTERNAL with that request id only.

Through the real stack, the unexpected is another process holding the database locked. The
other kinds of failure (a bug in a unary method, in a stream after its first message) are
ordered from a servicer of the test's own, on a real grpc.aio server with the interceptor."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest

from shellexec.api.call_log import CallLog
from shellexec.api.interceptor import ErrorInterceptor
from shellexec.service import NotFoundError
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc
from shellexec.vocabulary import RESOURCE_TASK

from support.stack import Stack

SECRET = "AKIA-this-is-printed-output"


class Failing(pb_grpc.ShellExecServiceServicer):  # type: ignore[misc]
    async def GetSession(self, request: pb.GetSessionRequest, context: Any) -> Any:  # noqa: N802
        raise RuntimeError(f"a bug holding {SECRET}")

    async def GetBootState(  # noqa: N802
            self, request: pb.GetBootStateRequest, context: Any) -> Any:
        raise NotFoundError("task", "x" * 100_000, RESOURCE_TASK)

    async def WatchMessages(self, request: pb.WatchMessagesRequest, context: Any  # noqa: N802
                            ) -> AsyncIterator[pb.WatchMessagesResponse]:
        yield pb.WatchMessagesResponse(type="heartbeat")
        raise KeyError(SECRET)


async def calls(log: io.StringIO) -> list[tuple[grpc.StatusCode, str, int]]:
    server = grpc.aio.server(interceptors=[ErrorInterceptor(CallLog(log))])
    pb_grpc.add_ShellExecServiceServicer_to_server(Failing(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    found = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ShellExecServiceStub(channel)
            # One after the other: an aio call starts as soon as it is made.
            for method, request, metadata in (
                    ("GetSession", pb.GetSessionRequest(), (("x-request-id", "r-1"),)),
                    ("GetSession", pb.GetSessionRequest(), ()),
                    ("GetBootState", pb.GetBootStateRequest(), ())):
                try:
                    await getattr(stub, method)(request, metadata=metadata)
                except grpc.aio.AioRpcError as error:
                    found.append((error.code(), error.details() or "", 0))
            stream = stub.WatchMessages(pb.WatchMessagesRequest())
            received = 0
            try:
                async for _ in stream:
                    received += 1
            except grpc.aio.AioRpcError as error:
                found.append((error.code(), error.details() or "", received))
    finally:
        await server.stop(None)
    return found


def test_unexpected_failures_are_internal_with_a_request_id_and_logged_without_text() -> None:
    log = io.StringIO()
    (first, second, not_found, stream) = asyncio.run(calls(log))
    lines = [json.loads(line) for line in log.getvalue().splitlines()]

    assert first == (grpc.StatusCode.INTERNAL, "internal error; request id r-1", 0)
    assert second[0] == grpc.StatusCode.INTERNAL
    generated = second[1].removeprefix("internal error; request id ")
    assert len(generated) == 32
    assert stream[0] == grpc.StatusCode.INTERNAL
    assert stream[2] == 1  # the message before the failure arrived
    assert not_found[0] == grpc.StatusCode.NOT_FOUND
    assert len(not_found[1]) < 100

    # One line per call, in the order they ended; only the unexpected ones name an error.
    assert [(line["request_id"], line["method"], line["status"], line.get("error"))
            for line in lines] == [
        ("r-1", "/shellexec.v1.ShellExecService/GetSession", "INTERNAL", "RuntimeError"),
        (generated, "/shellexec.v1.ShellExecService/GetSession", "INTERNAL", "RuntimeError"),
        (lines[2]["request_id"], "/shellexec.v1.ShellExecService/GetBootState", "NOT_FOUND",
         None),
        (lines[3]["request_id"], "/shellexec.v1.ShellExecService/WatchMessages", "INTERNAL",
         "KeyError")]
    assert all("test_unexpected_errors.py" in line["origin"] for line in lines if "error" in line)
    assert SECRET not in log.getvalue()
    assert all(SECRET not in details for _, details, _ in (first, second, stream))


class WritingAfterItsCallerLeft(pb_grpc.ShellExecServiceServicer):  # type: ignore[misc]
    """A feed that writes once more after its caller went away, as a stopping server's
    `end_of_stream` did when the front door had gone first: grpc raises ExecuteBatchError."""

    def __init__(self) -> None:
        self.wrote = asyncio.Event()

    async def WatchMessages(self, request: pb.WatchMessagesRequest,  # noqa: N802
                            context: grpc.aio.ServicerContext) -> None:
        await context.write(pb.WatchMessagesResponse(type="heartbeat"))
        try:
            await asyncio.Event().wait()  # until the caller cancels
        except asyncio.CancelledError:
            self.wrote.set()
            await context.write(pb.WatchMessagesResponse(type="end_of_stream"))


async def a_feed_cancelled_by_its_caller(log: io.StringIO) -> None:
    servicer = WritingAfterItsCallerLeft()
    server = grpc.aio.server(interceptors=[ErrorInterceptor(CallLog(log))])
    pb_grpc.add_ShellExecServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stream = pb_grpc.ShellExecServiceStub(channel).WatchMessages(
                pb.WatchMessagesRequest())
            await stream.read()
            stream.cancel()
            await asyncio.wait_for(servicer.wrote.wait(), 10)
    finally:
        await server.stop(1)


def test_a_failure_after_the_caller_went_away_is_logged_cancelled_not_internal() -> None:
    """A stopping front door closed its feeds before the server's last writes: each was logged
    INTERNAL (ExecuteBatchError), which the alert on server errors counts."""
    log = io.StringIO()
    asyncio.run(a_feed_cancelled_by_its_caller(log))
    lines = [json.loads(line) for line in log.getvalue().splitlines()]
    assert [(line["method"], line["status"], line.get("error")) for line in lines] == [
        ("/shellexec.v1.ShellExecService/WatchMessages", "CANCELLED", None)]


@pytest.mark.sqlite_only  # changes the file under the server
def test_an_unexpected_failure_is_internal_through_envoy_with_envoys_request_id_logged(
        stack_with: Callable[..., Stack]) -> None:
    # A table taken away under the server: its statements fail as nothing a caller did would
    # make them (a database locked by another program was the fault here before it became
    # UNAVAILABLE, ADR 0002).
    own_stack = stack_with()
    session_id = own_stack.api.new_session()["id"]
    with sqlite3.connect(own_stack.workdir / "shellexec.db") as other:
        other.execute("DROP TABLE publish_receipt")
    response = own_stack.api.request(
        "POST", f"/api/v1/task-sessions/{session_id}/updates",
        {"update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "lost"}}, "sequence": 1})

    assert response.status == 500
    body = response.json()
    assert body["code"] == 13
    request_id = body["message"].removeprefix("internal error; request id ")
    assert len(request_id) == 36  # Envoy's x-request-id, a UUID
    logged = [json.loads(line) for line in (own_stack.workdir / "server.log").read_text()
              .splitlines() if line.startswith("{")]
    assert [(line["request_id"], line["method"], line["status"]) for line in logged
            if line["status"] != "OK"] == [
        (request_id, "/shellexec.v1.ShellExecService/PublishUpdate", "INTERNAL")]
    assert "publish_receipt" not in json.dumps(logged)  # not the failure's text
    assert own_stack.api.request("POST", "/api/v1/task-sessions",
                                 {"task_id": "after"}).status == 200

"""Anything unexpected is logged as one JSON line (request id, method, status, never the
failure's text) and answered INTERNAL with that request id only.

The real service has no failure to order, so these run the error interceptor on a real
grpc.aio server in front of a servicer of the test's own that fails the way a bug would."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc

from shellexec.api.interceptor import ErrorInterceptor
from shellexec.service import NotFoundError
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

SECRET = "AKIA-this-is-printed-output"


class Failing(pb_grpc.ShellExecServiceServicer):  # type: ignore[misc]
    async def GetSession(self, request: pb.GetSessionRequest, context: Any) -> Any:  # noqa: N802
        raise RuntimeError(f"a bug holding {SECRET}")

    async def GetBootState(  # noqa: N802
            self, request: pb.GetBootStateRequest, context: Any) -> Any:
        raise NotFoundError("task", "x" * 100_000)

    async def WatchMessages(self, request: pb.WatchMessagesRequest, context: Any  # noqa: N802
                            ) -> AsyncIterator[pb.WatchMessagesResponse]:
        yield pb.WatchMessagesResponse(type="heartbeat")
        raise KeyError(SECRET)


async def calls(log: io.StringIO) -> list[tuple[grpc.StatusCode, str, int]]:
    server = grpc.aio.server(interceptors=[ErrorInterceptor(log)])
    pb_grpc.add_ShellExecServiceServicer_to_server(Failing(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    found = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ShellExecServiceStub(channel)
            for call in (
                    stub.GetSession(pb.GetSessionRequest(), metadata=(("x-request-id", "r-1"),)),
                    stub.GetSession(pb.GetSessionRequest()),
                    stub.GetBootState(pb.GetBootStateRequest())):
                try:
                    await call
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

    assert [(line["request_id"], line["method"], line["status"], line["error"])
            for line in lines[:2]] == [
        ("r-1", "/shellexec.v1.ShellExecService/GetSession", "INTERNAL", "RuntimeError"),
        (generated, "/shellexec.v1.ShellExecService/GetSession", "INTERNAL", "RuntimeError")]
    assert lines[2]["error"] == "KeyError"
    assert len(lines) == 3  # a use-case error is not unexpected
    assert SECRET not in log.getvalue()
    assert all(SECRET not in details for _, details, _ in (first, second, stream))

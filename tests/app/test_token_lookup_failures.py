"""A token lookup that fails: the authenticator runs before any handler, outside the error
interceptor, which wraps handlers. A failure raised there reached gRPC itself, which answered
UNKNOWN naming our exception's class, and the call was neither logged nor counted: an
operator's error alert could not see it. It is now failed inside the call's handler."""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from peewee import OperationalError

from shellexec.api import SERVICE_NAME
from shellexec.api.auth import Authenticator
from shellexec.api.call_log import CallLog
from shellexec.api.handlers import method_handlers
from shellexec.api.interceptor import ErrorInterceptor
from shellexec.api.metrics_interceptor import MetricsInterceptor
from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.client.aio import AsyncShellExecClient
from shellexec.service.access import Caller
from shellexec.store import DatabaseUnavailableError

GET_SESSION = "/shellexec.v1.ShellExecService/GetSession"


async def _answer(workdir: Path, failure: Exception) -> tuple[grpc.aio.AioRpcError, str, float]:
    """What a GetSession whose token lookup raises `failure` is answered, the call log, and
    how many such calls the metrics counted with the answer's code."""
    async def lookup(secret: str, ticket: str | None) -> Caller | None:
        raise failure

    app = compose(Settings(database_url=f"sqlite:///{workdir / 'shellexec.db'}"))
    log = io.StringIO()
    server = grpc.aio.server(interceptors=[
        MetricsInterceptor(app.metrics.requests, app.metrics.latency),
        ErrorInterceptor(CallLog(log)), Authenticator(lookup)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        SERVICE_NAME, method_handlers(app.servicer)),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with AsyncShellExecClient(f"127.0.0.1:{port}", token="shx_any") as client:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await client.get_session(f"ses_{uuid.uuid4().hex}")
    finally:
        await server.stop(None)
        app.close()
    counted = app.metrics.registry.get_sample_value(
        "shellexec_requests_total", {"method": GET_SESSION, "code": raised.value.code().name})
    return raised.value, log.getvalue(), counted or 0.0


def test_an_unavailable_database_is_unavailable_logged_and_counted(tmp_path: Path) -> None:
    error, log, counted = asyncio.run(_answer(tmp_path, DatabaseUnavailableError("gone")))
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert error.details() == "the database is unavailable (gone); retry shortly"
    [line] = [json.loads(line) for line in log.splitlines()]
    assert line["status"] == "UNAVAILABLE"
    assert counted == 1.0


def test_any_other_failure_is_internal_with_the_request_id_logged_and_counted(
        tmp_path: Path) -> None:
    error, log, counted = asyncio.run(_answer(tmp_path, OperationalError("disk I/O error")))
    assert error.code() == grpc.StatusCode.INTERNAL
    details = error.details() or ""
    assert details.startswith("internal error; request id ")
    assert "OperationalError" not in details
    assert "disk I/O error" not in details
    [line] = [json.loads(line) for line in log.splitlines()]
    assert line["status"] == "INTERNAL"
    assert counted == 1.0


def test_a_stream_of_an_open_service_is_failed_the_same_way(tmp_path: Path) -> None:
    """A health watch or reflection stream with a token looks it up too (to take it out of
    the tokenless streams' line); a failure there escaped as UNKNOWN naming its class."""
    async def lookup(secret: str, ticket: str | None) -> Caller | None:
        raise OperationalError("no such table: api_token")

    async def watched() -> tuple[grpc.aio.AioRpcError, str]:
        log = io.StringIO()
        server = grpc.aio.server(interceptors=[ErrorInterceptor(CallLog(log)),
                                               Authenticator(lookup)])
        health_pb2_grpc.add_HealthServicer_to_server(health_aio.HealthServicer(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                watch = health_pb2_grpc.HealthStub(channel).Watch(
                    health_pb2.HealthCheckRequest(service=""),
                    metadata=(("authorization", "Bearer shx_made-up"),))
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    async for _ in watch:
                        pass
        finally:
            await server.stop(None)
        return raised.value, log.getvalue()

    error, log = asyncio.run(watched())
    assert error.code() == grpc.StatusCode.INTERNAL
    assert (error.details() or "").startswith("internal error; request id ")
    [line] = [json.loads(line) for line in log.splitlines()]
    assert line["status"] == "INTERNAL"

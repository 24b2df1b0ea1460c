"""The metrics interceptor counts the status callers get, whether it stands before the error
interceptor (it sees the abort) or after it (it sees the use case's error and maps it the
same way): the order of the chain is free for logging and authentication to choose."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import grpc
import pytest

from shellexec.api import SERVICE_NAME
from shellexec.api.auth import Authenticator
from shellexec.api.call_log import LOG_OFF, CallLog
from shellexec.api.handlers import method_handlers
from shellexec.api.interceptor import ErrorInterceptor
from shellexec.api.metrics_interceptor import MetricsInterceptor
from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.client.aio import AsyncShellExecClient

GET_SESSION = "/shellexec.v1.ShellExecService/GetSession"


async def codes_counted(workdir: Path, metrics_first: bool) -> dict[str, float]:
    app = compose(Settings(database_url=f"sqlite:///{workdir / 'shellexec.db'}"))
    metrics = MetricsInterceptor(app.metrics.requests, app.metrics.latency)
    errors = ErrorInterceptor(CallLog(sys.stderr, LOG_OFF))
    chain = [metrics, errors] if metrics_first else [errors, metrics]
    # Authentication off: every call is made as the unrestricted caller, as on loopback.
    server = grpc.aio.server(interceptors=[*chain, Authenticator(None)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        SERVICE_NAME, method_handlers(app.servicer)),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with AsyncShellExecClient(f"127.0.0.1:{port}") as client:
            session = await client.create_session("interceptor-order")
            await client.get_session(session.id)
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await client.get_session(f"ses_{uuid.uuid4().hex}")
            assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        await server.stop(None)
        app.close()
    registry = app.metrics.registry
    return {code: registry.get_sample_value(
        "shellexec_requests_total", {"method": GET_SESSION, "code": code}) or 0.0
        for code in ("OK", "NOT_FOUND", "INTERNAL")}


@pytest.mark.parametrize("metrics_first", [True, False])
def test_the_status_is_counted_in_either_position(tmp_path: Path, metrics_first: bool) -> None:
    counted = asyncio.run(codes_counted(tmp_path, metrics_first))
    assert counted == {"OK": 1.0, "NOT_FOUND": 1.0, "INTERNAL": 0.0}

"""Where a refusal of a token gets its reason (docs/api.md, "Error reasons"; ADR 0050, since
2026-12-06): the interceptor's refusals and a session created in a task the token does not
cover carry an ErrorInfo in their gRPC details, and the front door's token check says why in
the headers Envoy keeps as metadata. Through the real Envoy, for every protocol:
tests/service/test_token_refusal_reasons.py."""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml  # type: ignore[import-untyped]
from google.rpc import error_details_pb2, status_pb2

from shellexec.api import SERVICE_NAME
from shellexec.api.auth import MISSING_TOKEN, UNKNOWN_TOKEN, Authenticator
from shellexec.api.call_log import CallLog
from shellexec.api.checked_tokens import Checked
from shellexec.api.handlers import method_handlers
from shellexec.api.interceptor import ErrorInterceptor
from shellexec.app import token_check
from shellexec.app.composition import compose
from shellexec.app.envoy import render
from shellexec.app.settings import Settings
from shellexec.client import error_details
from shellexec.client.aio import AsyncShellExecClient
from shellexec.service import PermissionDeniedError
from shellexec.service.access import UNRESTRICTED, Caller
from shellexec.store import DatabaseUnavailableError
from shellexec.vocabulary import (
    ERROR_DOMAIN,
    REASON_SCOPE_MISSING,
    REASON_TASK_NOT_COVERED,
    REASON_TOKEN_MISSING,
    REASON_TOKEN_UNKNOWN,
    SCOPE_INGEST,
    SCOPE_READ,
)

READER = Caller("reader", frozenset({SCOPE_READ}))
NARROW = Caller("narrow", frozenset({SCOPE_INGEST}), ("repo-*",))
TOKENS = {"shx_reader": READER, "shx_narrow": NARROW}


async def _lookup(secret: str, ticket: str | None) -> Caller | None:
    return TOKENS.get(secret)


Call = Callable[[AsyncShellExecClient], Awaitable[Any]]


def _refused(tmp_path: Path, token: str, call: Call) -> grpc.aio.AioRpcError:
    """The error a server with authentication on (its interceptors as `serve` orders the
    error interceptor and the authenticator) answers `call` with, made with `token`."""
    async def run() -> grpc.aio.AioRpcError:
        app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'shellexec.db'}"))
        server = grpc.aio.server(interceptors=[ErrorInterceptor(CallLog(io.StringIO())),
                                               Authenticator(_lookup)])
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            SERVICE_NAME, method_handlers(app.servicer)),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with AsyncShellExecClient(f"127.0.0.1:{port}", token=token) as client:
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await call(client)
        finally:
            await server.stop(None)
            app.close()
        return raised.value

    return asyncio.run(run())


def _create_other_task(client: AsyncShellExecClient) -> Awaitable[Any]:
    return client.create_session("elsewhere", "codex")


@pytest.mark.parametrize(("token", "code", "reason"), [
    ("", grpc.StatusCode.UNAUTHENTICATED, REASON_TOKEN_MISSING),
    ("shx_made-up", grpc.StatusCode.UNAUTHENTICATED, REASON_TOKEN_UNKNOWN),
    ("shx_reader", grpc.StatusCode.PERMISSION_DENIED, REASON_SCOPE_MISSING),
    ("shx_narrow", grpc.StatusCode.PERMISSION_DENIED, REASON_TASK_NOT_COVERED),
])
def test_each_refusal_of_a_token_over_direct_grpc_carries_its_reason(
        tmp_path: Path, token: str, code: grpc.StatusCode, reason: str) -> None:
    error = _refused(tmp_path, token, _create_other_task)
    found = error_details(error)
    assert error.code() == code
    assert (found.reason, found.domain) == (reason, ERROR_DOMAIN)
    assert found.field_violations == ()



def test_the_refusal_s_status_details_repeat_its_code_and_message(tmp_path: Path) -> None:
    error = _refused(tmp_path, "", _create_other_task)
    [status] = [status_pb2.Status.FromString(value) for key, value in error.trailing_metadata()
                if key == "grpc-status-details-bin"]
    assert (status.code, status.message) == (grpc.StatusCode.UNAUTHENTICATED.value[0],
                                              MISSING_TOKEN)
    assert error.details() == MISSING_TOKEN


def test_a_session_of_a_task_the_token_does_not_cover_is_task_not_covered(
        tmp_path: Path) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'shellexec.db'}"))
    try:
        with pytest.raises(PermissionDeniedError) as refused:
            asyncio.run(app.sessions.create("elsewhere", "codex", caller=NARROW))
    finally:
        app.close()
    assert refused.value.reason == REASON_TASK_NOT_COVERED


async def _check(secret: str) -> Checked | None:
    if secret == "shx_down":
        raise DatabaseUnavailableError("gone")
    return Checked(UNRESTRICTED, "0" * 32) if secret == "shx_valid" else None


def _headers(answer: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    return status, dict(line.split(": ", 1) for line in lines), body


def _unpadded(value: str) -> bytes:
    assert not value.endswith("="), value  # as Connect and gRPC write binary values
    return base64.b64decode(value + "=" * (-len(value) % 4))


@pytest.mark.parametrize(("authorization", "message", "reason"), [
    (None, MISSING_TOKEN, REASON_TOKEN_MISSING),
    ("Bearer shx_made-up", UNKNOWN_TOKEN, REASON_TOKEN_UNKNOWN),
    ("Basic dXNlcjpwdw==", UNKNOWN_TOKEN, REASON_TOKEN_UNKNOWN),
])
def test_the_token_check_s_refusal_says_why_in_its_headers(
        authorization: str | None, message: str, reason: str) -> None:
    status, headers, body = _headers(asyncio.run(token_check.answer(authorization, _check)))
    assert status == "HTTP/1.1 401 Unauthorized"
    assert body == message.encode()
    assert headers[token_check.REASON_HEADER] == reason
    info = error_details_pb2.ErrorInfo.FromString(
        _unpadded(headers[token_check.ERROR_INFO_HEADER]))
    assert (info.reason, info.domain, dict(info.metadata)) == (reason, ERROR_DOMAIN, {})
    details = status_pb2.Status.FromString(_unpadded(headers[token_check.STATUS_DETAILS_HEADER]))
    assert (details.code, details.message) == (grpc.StatusCode.UNAUTHENTICATED.value[0],
                                               message)
    [packed] = details.details
    assert packed.Unpack(unpacked := error_details_pb2.ErrorInfo())
    assert unpacked == info


@pytest.mark.parametrize("authorization", ["Bearer shx_valid", "Bearer shx_down"])
def test_an_admitted_or_unchecked_token_says_no_reason(authorization: str) -> None:
    status, headers, _ = _headers(asyncio.run(token_check.answer(authorization, _check)))
    assert status in ("HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable")
    assert not set(headers) & set(token_check.DETAILS_HEADERS)


def test_envoy_keeps_the_check_s_reasons_as_metadata_and_passes_none_of_its_headers() -> None:
    rendered = yaml.safe_load(render(Settings(auth=True), 50051))
    manager = rendered["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    [ext_authz] = [item for item in manager["typed_config"]["http_filters"]
                   if item["name"] == token_check.FILTER_NAME]
    response = ext_authz["typed_config"]["http_service"]["authorization_response"]
    kept = [pattern["exact"] for pattern in response["dynamic_metadata_from_headers"]["patterns"]]
    assert kept == list(token_check.DETAILS_HEADERS)
    passed = [pattern["exact"] for pattern in response["allowed_client_headers"]["patterns"]]
    assert not set(passed) & set(token_check.DETAILS_HEADERS)

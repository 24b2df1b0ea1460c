"""The token check's own protocol, on a real Unix socket: Envoy's checks are answered 200 or
401 on one kept-alive connection, and anything that is not such a check closes the connection
(ADR 0119). Through Envoy it is tested in tests/service/test_token_check.py."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from shellexec.api.auth import MISSING_TOKEN, TICKET_HEADER, UNKNOWN_TOKEN
from shellexec.api.checked_tokens import Checked
from shellexec.app import token_check
from shellexec.app.envoy import render
from shellexec.app.settings import Settings
from shellexec.app.token_check import CHECK_PREFIX, TokenCheckEndpoint, parse_check
from shellexec.service import UNRESTRICTED

VALID = "shx_valid"


TICKET = "0123456789abcdef0123456789abcdef"


async def _lookup(secret: str) -> Checked | None:
    return Checked(UNRESTRICTED, TICKET) if secret == VALID else None


async def _ready() -> bool:
    return True


def _check(authorization: str | None = None, path: str = "/api/v1/task-sessions") -> bytes:
    lines = [f"POST {CHECK_PREFIX}{path} HTTP/1.1", "host: token-check", "content-length: 0"]
    if authorization is not None:
        lines.append(f"authorization: {authorization}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _answer(reader: asyncio.StreamReader) -> tuple[str, str | None, bytes]:
    """The status line, the ticket header, and the body of the endpoint's answer."""
    lines = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
    body = await reader.readexactly(int(headers["content-length"]))
    return lines[0], headers.get(TICKET_HEADER), body


def _served(tmp_path: Path, talk: Callable[[asyncio.StreamReader, asyncio.StreamWriter],
                                           Awaitable[Any]],
            ready: Callable[[], Awaitable[bool]] = _ready) -> Any:
    async def run() -> Any:
        endpoint = TokenCheckEndpoint(tmp_path / "checks" / "check.sock", _lookup, ready)
        await endpoint.start()
        try:
            reader, writer = await asyncio.open_unix_connection(str(endpoint.path))
            try:
                return await asyncio.wait_for(talk(reader, writer), timeout=30)
            finally:
                writer.close()
        finally:
            await endpoint.stop()

    return asyncio.run(run())


def test_checks_on_one_connection_are_answered_in_turn(tmp_path: Path) -> None:
    async def talk(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> list[Any]:
        answers = []
        for authorization in (f"Bearer {VALID}", None, "Bearer shx_other", "Basic abc"):
            writer.write(_check(authorization))
            answers.append(await _answer(reader))
        return answers

    assert _served(tmp_path, talk) == [
        ("HTTP/1.1 200 OK", TICKET, b""),  # Envoy adds the ticket to the request it admits
        ("HTTP/1.1 401 Unauthorized", None, MISSING_TOKEN.encode()),
        ("HTTP/1.1 401 Unauthorized", None, UNKNOWN_TOKEN.encode()),
        ("HTTP/1.1 401 Unauthorized", None, UNKNOWN_TOKEN.encode()),  # another scheme, as
    ]                                                                # the interceptor does


def test_envoy_s_probe_is_answered_as_the_server_s_readiness(tmp_path: Path) -> None:
    """A replica that lost its way to the database (while the others kept theirs) answered
    every token check it got 503, and stayed in the pool: its probe said 200 whatever the
    readiness. The gRPC pools had already left it out."""
    readiness = [True, False, True]

    async def ready() -> bool:
        return readiness.pop(0)

    async def talk(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> list[str]:
        answers = []
        for _ in range(3):
            writer.write(f"GET {token_check.HEALTH_PATH} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
            answers.append((await _answer(reader))[0])
        return answers

    assert _served(tmp_path, talk, ready) == [
        "HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable", "HTTP/1.1 200 OK"]


@pytest.mark.parametrize("request_head", [
    b"GET /elsewhere HTTP/1.1\r\nhost: x\r\n\r\n",  # not under the check prefix
    b"POST /check/api HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello",  # a body
    b"POST /check/api HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n",
    b"POST /check/api\r\n\r\n",  # no version
    b"POST /check/api HTTP/1.1\r\nx: " + b"a" * (token_check.MAX_CHECK_HEAD_BYTES + 1),
])
def test_anything_but_a_check_closes_the_connection(tmp_path: Path,
                                                    request_head: bytes) -> None:
    async def talk(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        writer.write(request_head)
        return await reader.read()  # b"" once the endpoint closes

    assert _served(tmp_path, talk) == b""


def test_stopping_ends_kept_alive_connections(tmp_path: Path) -> None:
    """Envoy keeps its connections open: stopping closes them instead of leaving their
    tasks to the loop's shutdown (which logs each as an error)."""
    async def run() -> tuple[bytes, int]:
        endpoint = TokenCheckEndpoint(tmp_path / "checks" / "check.sock", _lookup, _ready)
        await endpoint.start()
        reader, writer = await asyncio.open_unix_connection(str(endpoint.path))
        writer.write(_check(f"Bearer {VALID}"))
        await _answer(reader)
        await asyncio.wait_for(endpoint.stop(), timeout=10)
        rest = await asyncio.wait_for(reader.read(), timeout=10)
        writer.close()
        pending = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        return rest, len(pending)

    assert asyncio.run(run()) == (b"", 0)


def test_the_socket_is_private(tmp_path: Path) -> None:
    async def talk(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> int:
        return (tmp_path / "checks" / "check.sock").stat().st_mode & 0o777

    assert _served(tmp_path, talk) == 0o600
    assert (tmp_path / "checks").stat().st_mode & 0o777 == 0o700


def test_the_authorization_header_is_found_whatever_its_case() -> None:
    assert parse_check(b"POST /check/x HTTP/1.1\r\nAuthorization:  Bearer a \r\n\r\n") == \
        token_check.Check("Bearer a")
    assert parse_check(_check()) == token_check.Check(None)


def _http_filters(settings: Settings) -> list[str]:
    rendered = yaml.safe_load(render(settings, 50051, 50052))
    manager = rendered["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    return [item["name"] for item in manager["typed_config"]["http_filters"]]


def test_envoy_checks_tokens_only_with_authentication_on_and_before_holding_bodies() -> None:
    assert token_check.FILTER_NAME not in _http_filters(Settings())
    filters = _http_filters(Settings(auth=True))
    assert filters.index("envoy.filters.http.grpc_web") < filters.index(
        token_check.FILTER_NAME) < filters.index("envoy.filters.http.buffer")
    rendered = yaml.safe_load(render(Settings(auth=True, admin_socket="/run/x/admin.sock"),
                                     50051, 50052))
    cluster = next(cluster for cluster in rendered["static_resources"]["clusters"]
                   if cluster["name"] == token_check.CLUSTER)
    sockets = [endpoint["endpoint"]["address"]["pipe"]["path"] for endpoint in
               cluster["load_assignment"]["endpoints"][0]["lb_endpoints"]]
    assert sockets == ["/run/x/token-check-50051.sock", "/run/x/token-check-50052.sock"]
    # Every check a dead replica's socket refused may go to another server at once: Envoy's
    # default of three retries at once answered the rest 503 (a probe: 137 of 1,323 calls).
    [limits] = cluster["circuit_breakers"]["thresholds"]
    assert limits["max_retries"] == limits["max_connections"] + limits["max_pending_requests"]

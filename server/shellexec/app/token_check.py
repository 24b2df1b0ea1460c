"""The front door's token check: Envoy asks the server, from a request's headers alone, whether
its bearer token is valid, before Envoy holds the body or passes the call on (ADR 0119).

Without it, Envoy buffers a REST body whole (up to 8 MiB) and the server reads a gRPC message
whole (up to 16 MiB) before the server's interceptor sees the token, so a client with no token
could make both hold memory. With authentication on, Envoy's `ext_authz` filter sends each
request's method, path and `authorization` header here first, over HTTP/1.1 on a Unix socket
in the admin socket's private folder (no TCP port a web page could reach); a request without a
valid token is answered 401 by Envoy at once, before its body is read.

A refusal says why as the interceptor's does: an `ErrorInfo` whose reason is TOKEN_MISSING (no
`authorization` header) or TOKEN_UNKNOWN (one that names no valid token). The check's answer
carries it in headers no client sees: Envoy keeps them as the filter's dynamic metadata
(`DETAILS_HEADERS`), from which the front door's local reply mappers (`front_door_errors`,
`connect_protocol`) write the REST body's `details`, Connect's `details`, and gRPC's
`grpc-status-details-bin`; none of the check's own headers reaches the client.

Every request Envoy checks needs a valid token. The routes that must stay open turn the check
off in Envoy's configuration instead: those Envoy answers itself (the web page, the OpenAPI
document, the browser boundary's refusals), which also hold no body, and the health service,
whose requests Envoy holds to a small size. This check only tells a valid token from none:
which scope a method needs, and which tasks the caller sees, stay with the interceptor
(`api.auth`), which checks every call again.

The protocol is the small part of HTTP/1.1 Envoy's checks use: a request line and headers, no
body, kept alive for the next check. Anything else closes the connection.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc

from shellexec.api.auth import MISSING_TOKEN, TICKET_HEADER, UNKNOWN_TOKEN, bearer_token
from shellexec.api.checked_tokens import Checked
from shellexec.api.error_details import error_info, refusal_status
from shellexec.app import admin_socket
from shellexec.rules.limits import MAX_REQUEST_HEADERS_BYTES
from shellexec.store import DatabaseUnavailableError
from shellexec.vocabulary import REASON_TOKEN_MISSING, REASON_TOKEN_UNKNOWN, ErrorReason

# What Envoy puts before the original path of each check (its `path_prefix`).
CHECK_PREFIX = "/check"
# Envoy's name of the filter, which routes use to turn the check off, and the namespace of
# the dynamic metadata it keeps from a refusal's headers.
FILTER_NAME = "envoy.filters.http.ext_authz"
# The headers of a refusal that say why, each kept as the filter's dynamic metadata of the
# same name: the ErrorInfo reason (for the REST body), the ErrorInfo (for Connect's details)
# and the google.rpc.Status (for gRPC's grpc-status-details-bin), the last two serialized and
# in base64 without padding, as Connect and gRPC write binary values.
REASON_HEADER = "x-shellexec-error-reason"
ERROR_INFO_HEADER = "x-shellexec-error-info"
STATUS_DETAILS_HEADER = "x-shellexec-status-details"
DETAILS_HEADERS = (REASON_HEADER, ERROR_INFO_HEADER, STATUS_DETAILS_HEADER)
CLUSTER = "shellexec_token_check"
# A route's per-filter configuration that turns the check off (Envoy accepts it with
# authentication off too, when the filter is not there).
CHECK_OFF = {FILTER_NAME: {
    "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute",
    "disabled": True}}
# How long Envoy waits for a check; one that fails or times out is a 503 (UNAVAILABLE).
CHECK_TIMEOUT = "5s"
# A check's request line and headers: what Envoy sends of the checked request (its method,
# path, Host and `authorization`), which its own header limit bounds, plus the check prefix and
# a few headers of the check itself. Every check Envoy sends fits.
MAX_CHECK_HEAD_BYTES = MAX_REQUEST_HEADERS_BYTES + 4096
# How long a connection from Envoy may wait for its next check, and how long a check's head
# may then take to arrive (Envoy sends it at once). Envoy drops an idle connection sooner
# (IDLE_SECONDS / 2), so it never sends a check on one being closed here.
IDLE_SECONDS = 60.0
HEAD_SECONDS = 5.0
# Connections served at once; Envoy's circuit breaker opens no more (it queues checks
# instead), so only a hostile local peer meets the cap, and its connections are closed.
MAX_CONNECTIONS = 128
# Checks Envoy queues while every connection is busy (its default, written out because the
# retries' bound counts them).
MAX_PENDING_CHECKS = 1024
# Envoy's readiness probe of each socket, when there are several servers (replicas).
HEALTH_PATH = "/health"

# Envoy's readiness probe is answered so while the server is ready, and
_HEALTHY = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"
# so while it is not: then its checks go to the other replicas (a replica that lost its way to
# the database answered every check it got 503).
_NOT_READY = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n"


def socket_path(admin_socket_path: str | Path, grpc_port: int) -> Path:
    """The token check's socket of the server on `grpc_port`: beside Envoy's admin socket, in
    its private folder, one per server (replicas each have their own)."""
    return Path(admin_socket_path).parent / f"token-check-{grpc_port}.sock"


class TokenCheck(Protocol):
    """The caller a token names, and the ticket its call takes it by (`checked_tokens`)."""

    def __call__(self, secret: str) -> Awaitable[Checked | None]: ...


# Whether the server is ready: the gRPC health service's readiness (`app.health`).
Readiness = Callable[[], Awaitable[bool]]


async def answer(authorization: str | None, check: TokenCheck) -> bytes:
    """The answer to a check of a request with this `authorization` header: allowed, with the
    ticket Envoy adds to the request, or refused with the interceptor's own messages."""
    secret = bearer_token([] if authorization is None else [("authorization", authorization)])
    if secret is None:
        return _unauthenticated(MISSING_TOKEN, REASON_TOKEN_MISSING)
    try:
        checked = await check(secret)
    except DatabaseUnavailableError as error:
        # Envoy takes a 5xx for a failed check and answers 503 itself, which
        # `front_door_errors` gives a message; dropping the connection did the same, with a
        # traceback here. Not retried on another server: they share the database, and a
        # replica that cannot reach it while others can is out of the pool (`_NOT_READY`).
        return _refused(b"503 Service Unavailable", str(error))
    if checked is None:
        return _unauthenticated(UNKNOWN_TOKEN, REASON_TOKEN_UNKNOWN)
    return _allowed(checked.ticket)


def envoy_filter() -> dict[str, Any]:
    """The `ext_authz` HTTP filter asking CLUSTER about every request's headers. A check
    whose connection fails goes to another server (a replica that died leaves its socket
    refusing until it is started again)."""
    return {"name": FILTER_NAME, "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz",
        "transport_api_version": "V3",
        "http_service": {
            "server_uri": {"uri": "http://token-check", "cluster": CLUSTER,
                           "timeout": CHECK_TIMEOUT},
            "path_prefix": CHECK_PREFIX,
            # The check's ticket goes to the server with the request it admitted, replacing
            # any the client sent. Of a refusal, Envoy keeps the headers that say why as
            # dynamic metadata, which the local reply mappers write in each protocol's form,
            # and passes none of its headers to the client: `allowed_client_headers` names
            # one the check never sends (left empty, it would pass them all).
            "authorization_response": {
                "allowed_upstream_headers": {"patterns": [{"exact": TICKET_HEADER}]},
                "allowed_client_headers": {"patterns": [{"exact": "www-authenticate"}]},
                "dynamic_metadata_from_headers": {"patterns": [
                    {"exact": header} for header in DETAILS_HEADERS]}},
            "retry_policy": {
                "retry_on": "connect-failure,reset",
                "num_retries": 2,
                "retry_host_predicate": [{
                    "name": "envoy.retry_host_predicates.previous_hosts",
                    "typed_config": {"@type": "type.googleapis.com/envoy.extensions.retry."
                                              "host.previous_hosts.v3.PreviousHostsPredicate"}}],
                "host_selection_retry_max_attempts": 3}},
        "failure_mode_allow": False,
        "status_on_error": {"code": "ServiceUnavailable"},
    }}


def envoy_cluster(sockets: list[Path], health_checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The cluster of the servers' token check sockets, round robin, probed by
    `health_checks` (GET HEALTH_PATH, with several servers, as their gRPC ports are)."""
    cluster: dict[str, Any] = {
        "name": CLUSTER, "type": "STATIC", "connect_timeout": "1s",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3."
                         "HttpProtocolOptions",
                "common_http_protocol_options": {"idle_timeout": f"{IDLE_SECONDS / 2:.0f}s"},
                "explicit_http_config": {"http_protocol_options": {}}}},
        # Envoy's own default allows three retries at once: when a replica died, the checks
        # its socket refused beyond three answered 503 instead of going to another server.
        "circuit_breakers": {"thresholds": [{
            "max_connections": MAX_CONNECTIONS, "max_pending_requests": MAX_PENDING_CHECKS,
            "max_retries": MAX_CONNECTIONS + MAX_PENDING_CHECKS}]},
        "load_assignment": {"cluster_name": CLUSTER, "endpoints": [{"lb_endpoints": [
            {"endpoint": {"address": {"pipe": {"path": str(path)}}}} for path in sockets]}]},
    }
    if health_checks:
        cluster["health_checks"] = health_checks
    return cluster


def _allowed(ticket: str) -> bytes:
    return (b"HTTP/1.1 200 OK\r\n" + TICKET_HEADER.encode() + b": " + ticket.encode()
            + b"\r\ncontent-length: 0\r\n\r\n")


def _unpadded_base64(data: bytes) -> bytes:
    return base64.b64encode(data).rstrip(b"=")


def _unauthenticated(message: str, reason: ErrorReason) -> bytes:
    """A 401 refusal with `message`, and the headers that say why (`DETAILS_HEADERS`)."""
    info = error_info(reason).SerializeToString()
    status = refusal_status(grpc.StatusCode.UNAUTHENTICATED, message, reason)
    return _refused(b"401 Unauthorized", message, [
        (REASON_HEADER, reason.encode()), (ERROR_INFO_HEADER, _unpadded_base64(info)),
        (STATUS_DETAILS_HEADER, _unpadded_base64(status))])


def _refused(status: bytes, message: str, headers: list[tuple[str, bytes]] | None = None
             ) -> bytes:
    body = message.encode()
    extra = b"".join(name.encode() + b": " + value + b"\r\n" for name, value in headers or ())
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + extra + b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


@dataclass(frozen=True, slots=True)
class Check:
    """One of Envoy's checks: the checked request's `authorization` header, if it has one."""

    authorization: str | None


def _is_health_probe(head: bytes) -> bool:
    """Whether the head is Envoy's readiness probe (`GET /health`)."""
    return head.startswith(f"GET {HEALTH_PATH} HTTP/1.".encode())


def parse_check(head: bytes) -> Check | None:
    """The check a request head asks for, or None when the head is not one Envoy sends
    (then the connection is closed)."""
    try:
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ")
    except ValueError:
        return None
    if not version.startswith("HTTP/1.") or not target.startswith(CHECK_PREFIX) or not method:
        return None
    authorization = None
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            continue
        name = name.strip().lower()
        if name == "content-length" and value.strip() != "0":
            return None  # a check never has a body
        if name == "transfer-encoding":
            return None
        if name == "authorization":
            authorization = value.strip()
    return Check(authorization)


class TokenCheckEndpoint:
    """Answers Envoy's token checks on the Unix socket `path`, on the event loop (a check is a
    parse and one indexed read, like the interceptor's), from `start()` to `stop()`; Envoy's
    readiness probe as `ready` says, as the gRPC health service answers its own probes."""

    def __init__(self, path: Path, check: TokenCheck, ready: Readiness) -> None:
        self._path = path
        self._check = check
        self._ready = ready
        self._server: asyncio.Server | None = None
        # Envoy's kept-alive connections and the tasks serving them: `stop` ends them itself,
        # since closing the server leaves open connections to the loop's shutdown.
        self._connections: dict[asyncio.StreamWriter, asyncio.Task[Any]] = {}

    @property
    def path(self) -> Path:
        return self._path

    async def start(self) -> None:
        """Makes the private folder (or checks it), then listens; a stale socket file from a
        server that died is replaced."""
        admin_socket.prepare(self._path)
        self._path.unlink(missing_ok=True)
        self._server = await asyncio.start_unix_server(
            self._serve, path=str(self._path), limit=MAX_CHECK_HEAD_BYTES)
        self._path.chmod(admin_socket.SOCKET_MODE)

    async def stop(self) -> None:
        """Stops listening, then ends every open connection (its check, if one is under way,
        goes unanswered: Envoy answers that request 503)."""
        if self._server is not None:
            self._server.close()
        for writer in self._connections:
            writer.close()  # its task reads the end of the stream and returns
        await asyncio.gather(*self._connections.values(), return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1):
                    await self._server.wait_closed()
        self._path.unlink(missing_ok=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # the server runs each connection in a task of its own
        if len(self._connections) >= MAX_CONNECTIONS:
            writer.close()
            return
        self._connections[writer] = task
        try:
            while True:
                head = await self._next_head(reader)
                if _is_health_probe(head):
                    writer.write(_HEALTHY if await self._ready() else _NOT_READY)
                    await writer.drain()
                    continue
                check = parse_check(head)
                if check is None:
                    return
                writer.write(await answer(check.authorization, self._check))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                ConnectionError):
            return
        finally:
            del self._connections[writer]
            writer.close()

    @staticmethod
    async def _next_head(reader: asyncio.StreamReader) -> bytes:
        """The next request head: its first byte within IDLE_SECONDS, the rest within
        HEAD_SECONDS (a head that never ends holds a connection only that long)."""
        async with asyncio.timeout(IDLE_SECONDS):
            first = await reader.readexactly(1)
        async with asyncio.timeout(HEAD_SECONDS):
            return first + await reader.readuntil(b"\r\n\r\n")

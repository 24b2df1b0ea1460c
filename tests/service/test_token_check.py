"""With authentication on, the front door refuses a request without a valid token from its
headers, before it holds the body: a client with no token cannot make Envoy buffer a REST body
or the server read a gRPC message (ADR 0119). What must stay open (the page, the OpenAPI
document, health) is served without a token and holds no large body either."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import subprocess
from contextlib import ExitStack

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.api.auth import MISSING_TOKEN, UNKNOWN_TOKEN
from shellexec.app import content_type_case
from shellexec.rules.limits import (
    FRONT_DOOR_STREAM_BUFFER_BYTES,
    MAX_HEALTH_REQUEST_BYTES,
    MAX_REQUEST_HEADERS_BYTES,
    MAX_REST_BODY_BYTES,
)
from shellexec.vocabulary import ERROR_DOMAIN, REASON_TOKEN_MISSING, REASON_TOKEN_UNKNOWN

from support.memory import rss_mib
from support.rest import unique
from support.stack import BIN, Stack

# A body the client announces whole but sends only the start of: a front door that waited for
# it would answer only when the read below gives up.
ANNOUNCED = MAX_REST_BODY_BYTES - 1
SENT = 64 * 1024
# Bounds a broken front door's wait; a working one answers at once.
READ_TIMEOUT_SECONDS = 30


def _unauthenticated(message: str, reason: str) -> dict[str, object]:
    """The front door's 401 body: the check's message and reason (docs/api.md, "Errors")."""
    return {"code": 16, "message": message, "details": [{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
        "domain": ERROR_DOMAIN, "metadata": {}}]}


def _held_body_answer(stack: Stack, method: str, path: str, content_type: str,
                      authorization: str | None = None) -> tuple[str, dict[str, str], bytes]:
    """The status line, headers and body Envoy answers to a request whose body is announced
    (ANNOUNCED bytes) but never finished."""
    head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{stack.rest_port}",
            f"Content-Type: {content_type}", f"Content-Length: {ANNOUNCED}"]
    if authorization is not None:
        head.append(f"Authorization: {authorization}")
    with socket.create_connection(("127.0.0.1", stack.rest_port),
                                  timeout=READ_TIMEOUT_SECONDS) as connection:
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + b"{" + b" " * SENT)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(1 << 16)
            assert chunk, f"closed without an answer: {received[:200]!r}"
            received += chunk
        status_head, _, body = received.partition(b"\r\n\r\n")
        lines = status_head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip()
                   for name, _, value in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = connection.recv(1 << 16)
            assert chunk, "closed in the middle of the answer"
            body += chunk
    return lines[0], headers, body


@pytest.mark.sqlite_only  # Envoy and the token check: the same whichever engine stores data
@pytest.mark.parametrize("path", [
    "/api/v1/task-sessions", "/api/v1/no-such-route", "/api/v1/tasks/t1",
    "/api/v1/task-sessions/ses_x/turns/", "/api/v1/tasks/ns:complete"])
def test_a_rest_body_without_a_token_is_refused_before_it_is_held(secured: Stack,
                                                                   path: str) -> None:
    """Even on a path the front door refuses itself (405, an empty segment, a value read as
    a verb), docs/api.md promises 401 first."""
    status, headers, body = _held_body_answer(secured, "POST", path, "application/json")
    assert status.startswith("HTTP/1.1 401"), status
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == _unauthenticated(MISSING_TOKEN, REASON_TOKEN_MISSING)


@pytest.mark.sqlite_only
def test_a_path_nothing_serves_is_answered_at_once_without_holding_its_body(
        secured: Stack) -> None:
    status, _, body = _held_body_answer(secured, "POST", "/nowhere", "application/json")
    assert status.startswith("HTTP/1.1 404"), status
    answer = json.loads(body)
    assert answer["code"] == 5
    assert "/nowhere" in answer["message"], answer


@pytest.mark.sqlite_only
def test_an_unknown_token_is_refused_before_its_body_is_held(secured: Stack) -> None:
    status, _, body = _held_body_answer(secured, "POST", "/api/v1/task-sessions",
                                        "application/json", "Bearer shx_made-up")
    assert status.startswith("HTTP/1.1 401"), status
    assert json.loads(body) == _unauthenticated(UNKNOWN_TOKEN, REASON_TOKEN_UNKNOWN)


@pytest.mark.sqlite_only
@pytest.mark.parametrize("content_type", ["application/grpc-web+proto", "application/grpc",
                                          "application/proto", "Application/GRPC-Web+Proto",
                                          "Application/Proto"])
def test_a_grpc_message_without_a_token_is_refused_before_the_server_reads_it(
        secured: Stack, content_type: str) -> None:
    """gRPC-Web, native gRPC (here over HTTP/1.1, which Envoy refuses the same way) and
    Connect calls of the service; a gRPC-Web or Connect content type in mixed case is refused
    as the lowercase one is (ADR 0134)."""
    status, headers, _ = _held_body_answer(
        secured, "POST", "/shellexec.v1.ShellExecService/PublishUpdate", content_type)
    if content_type.lower() == "application/proto":  # Connect carries the status in HTTP's
        assert status.startswith("HTTP/1.1 401"), status
    else:
        assert headers.get("grpc-status") == "16", (status, headers)


@pytest.mark.sqlite_only
def test_native_grpc_spelled_otherwise_is_invalid_argument_without_a_token(
        secured: Stack) -> None:
    """Like another codec (ADR 0121), native gRPC's Protobuf type not written in lowercase is
    refused by the front door itself (ADR 0134): no token is needed to learn why."""
    status, headers, _ = _held_body_answer(
        secured, "POST", "/shellexec.v1.ShellExecService/PublishUpdate", "Application/GRPC")
    assert status.startswith("HTTP/1.1 200"), status
    assert headers.get("grpc-status") == "3", (status, headers)
    assert headers.get("grpc-message") == content_type_case.REFUSAL


@pytest.mark.sqlite_only
def test_a_valid_token_passes_the_check(secured: Stack) -> None:
    api = secured.api_as(secured.create_token(unique("ingest"), "ingest"))
    created = api.request("POST", "/api/v1/task-sessions", {"task_id": unique("task")})
    assert created.status == 200, created.body[:300]


@pytest.mark.sqlite_only
def test_the_page_and_the_openapi_document_need_no_token_and_hold_no_body(
        secured: Stack) -> None:
    assert secured.api.request("GET", "/").status == 200
    assert secured.api.request("GET", "/api/v1/openapi.json").status == 200
    status, _, _ = _held_body_answer(secured, "GET", "/", "application/json")
    assert status.startswith("HTTP/1.1 200"), status


@pytest.mark.sqlite_only
def test_health_stays_open_through_the_front_door_but_holds_only_small_requests(
        secured: Stack) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{secured.rest_port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        answer = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        # Over HTTP/2 a request has no announced length: the stream buffer bounds it.
        with pytest.raises(grpc.RpcError) as refused:
            health.Check(health_pb2.HealthCheckRequest(
                service="x" * (FRONT_DOOR_STREAM_BUFFER_BYTES + 1)), timeout=10)
        assert refused.value.code() != grpc.StatusCode.NOT_FOUND  # never reached the server


@pytest.mark.sqlite_only
def test_a_health_watch_through_the_front_door_needs_a_token(secured: Stack) -> None:
    """A Watch is a stream its client may hold for as long as it likes, so only a caller with
    a token may hold one through the front door (ADR 0139); probes use Check, which stays
    open. On the server's own port the health service is open as before."""
    request = health_pb2.HealthCheckRequest(service="")
    with grpc.insecure_channel(f"127.0.0.1:{secured.rest_port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            next(health.Watch(request, timeout=10))
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        token = secured.create_token(unique("watcher"), "read")
        watch = health.Watch(request, metadata=(("authorization", f"Bearer {token}"),),
                             timeout=10)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        watch.cancel()
    with grpc.insecure_channel(secured.grpc_target) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(request, timeout=10)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        watch.cancel()


@pytest.mark.sqlite_only
def test_a_health_request_over_its_bound_is_413_at_once_and_not_held(secured: Stack) -> None:
    """Health is open without a token, so a larger body is refused as soon as it passes the
    bound, instead of being held until the stream times out."""
    status, headers, _ = _held_body_answer(secured, "POST", "/grpc.health.v1.Health/Check",
                                           "application/grpc-web+proto")
    assert status.startswith("HTTP/1.1 413"), status
    assert headers.get("connection") == "close"


@pytest.mark.sqlite_only
@pytest.mark.parametrize(("content_type", "status", "grpc_status"), [
    ("application/grpc", 200, "8"), ("application/grpc-web+proto", 413, None)])
def test_a_whole_health_request_over_its_bound_is_refused_by_its_length(
        secured: Stack, content_type: str, status: int, grpc_status: str | None) -> None:
    """A body that arrives whole is never held by the buffer, so only its announced length
    can refuse it: 1,928 bytes reached the server without a token."""
    name = b"a" * 1920
    message = b"\x0a" + bytes([0x80, 0x0f]) + name  # HealthCheckRequest.service
    frame = b"\x00" + len(message).to_bytes(4, "big") + message
    connection = http.client.HTTPConnection("127.0.0.1", secured.rest_port, timeout=30)
    try:
        connection.request("POST", "/grpc.health.v1.Health/Check", body=frame,
                           headers={"content-type": content_type, "te": "trailers"})
        answer = connection.getresponse()
        answer.read()
    finally:
        connection.close()
    assert answer.status == status
    if grpc_status is not None:
        assert answer.headers["grpc-status"] == grpc_status
        assert answer.headers["grpc-message"] == (
            f"a health check's request is at most {MAX_HEALTH_REQUEST_BYTES} bytes")


# Longer than gRPC's default metadata limit (16 KiB), under the front door's header limit.
LONG = 20_000


@pytest.mark.sqlite_only
def test_a_valid_tokens_long_query_gets_the_answer_it_gets_without_the_check(
        secured: Stack) -> None:
    api = secured.api_as(secured.create_token(unique("reader"), "read"))
    answer = api.request("GET", f"/api/v1/task-sessions?before=ses_{'a' * LONG}")
    # docs/api.md, Limits: a cursor that is not a server-assigned id is NOT_FOUND (404).
    assert answer.status == 404, (answer.status, answer.body[:200])
    assert json.loads(answer.body)["code"] == 5


@pytest.mark.sqlite_only
def test_an_over_long_token_is_unauthenticated(secured: Stack) -> None:
    answer = secured.api.request("GET", "/api/v1/task-sessions",
                                 headers={"authorization": f"Bearer {'a' * LONG}"})
    # docs/api.md, Authentication: a token over 256 characters is UNAUTHENTICATED (401).
    assert answer.status == 401, (answer.status, answer.body[:200])
    assert json.loads(answer.body) == _unauthenticated(UNKNOWN_TOKEN, REASON_TOKEN_UNKNOWN)


@pytest.mark.sqlite_only
def test_headers_over_the_front_doors_limit_are_431(secured: Stack) -> None:
    padding = {"x-padding": "a" * (MAX_REQUEST_HEADERS_BYTES + 1)}
    answer = secured.api.request("GET", "/api/v1/task-sessions", headers=padding)
    assert answer.status == 431, (answer.status, answer.body[:200])
    assert json.loads(answer.body)["code"] == 8


@pytest.mark.sqlite_only
def test_reflection_through_the_front_door_needs_a_token(secured: Stack) -> None:
    front_door = f"127.0.0.1:{secured.rest_port}"
    refused = subprocess.run([BIN / "grpcurl", "-plaintext", front_door, "list"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert "Unauthenticated" in refused.stderr, refused.stderr
    token = secured.create_token(unique("reader"), "read")
    listed = subprocess.run([BIN / "grpcurl", "-plaintext", "-H",
                             f"authorization: Bearer {token}", front_door, "list"],
                            capture_output=True, text=True, timeout=60, check=True)
    assert "shellexec.v1.ShellExecService" in listed.stdout


def _hold(stack: Stack, exits: ExitStack, head: bytes, body: bytes) -> None:
    """Sends `head` and as much of `body` as the front door takes, then keeps the connection
    open until `exits` closes (a refused one is reset at once)."""
    connection = exits.enter_context(
        socket.create_connection(("127.0.0.1", stack.rest_port), timeout=10))
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        connection.sendall(head + body)


@pytest.mark.sqlite_only
def test_held_rest_bodies_without_a_token_cost_envoy_little_memory(secured: Stack) -> None:
    assert secured.envoy is not None
    before = rss_mib(secured.envoy.pid)
    head = (f"POST /api/v1/task-sessions HTTP/1.1\r\nHost: 127.0.0.1:{secured.rest_port}\r\n"
            f"content-type: application/json\r\ncontent-length: {ANNOUNCED}\r\n\r\n").encode()
    # 2 MiB of each announced body is sent: what a front door that held bodies would hold,
    # and little enough for the kernel to take at once, so refused ones cost no waiting.
    with ExitStack() as exits:
        for _ in range(24):  # 48 MiB if Envoy held them
            _hold(secured, exits, head, b" " * (2 * 1024 * 1024))
        grown = rss_mib(secured.envoy.pid) - before
    assert grown < 16, f"24 held bodies without a token grew Envoy by {grown} MiB"

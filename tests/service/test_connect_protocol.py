"""The Connect protocol through the real Envoy (docs/api.md, "Connect"; ADR 0100): binary
Connect calls reach the service, unary and streaming, with the gRPC code and the google.rpc
details in Connect's error shape; JSON Connect gets 415 with a JSON error naming the supported
codec and reaches nothing; the browser boundary holds for Connect as for every request, and a
browser's Connect client from an allowed origin passes the CORS policy."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import socket
import struct
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from google.protobuf import struct_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2

from shellexec.app.connect_protocol import OVERSIZE
from shellexec.app.envoy import HEALTH_CHECK_PATH, HEALTH_OVERSIZE
from shellexec.rules.limits import MAX_HEALTH_REQUEST_BYTES, MAX_REST_BODY_BYTES
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.rest import unique
from support.stack import Stack

SERVICE = "/shellexec.v1.ShellExecService"
CONNECT = {"connect-protocol-version": "1"}
StackWith = Callable[..., Stack]


@dataclass(frozen=True)
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


@contextmanager
def posting(stack: Stack, path: str, body: bytes, headers: dict[str, str],
            method: str = "POST") -> Iterator[http.client.HTTPResponse]:
    """The answer to one request, unread (a stream's), closed after."""
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers)
        yield connection.getresponse()
    finally:
        connection.close()


def post(stack: Stack, path: str, body: bytes, headers: dict[str, str],
         method: str = "POST") -> Answer:
    with posting(stack, path, body, headers, method) as response:
        return Answer(response.status, response.headers, response.read())


def unary(stack: Stack, method: str, request: Message,
          content_type: str = "application/proto") -> Answer:
    return post(stack, f"{SERVICE}/{method}", request.SerializeToString(),
                {"content-type": content_type, **CONNECT})


def envelope(message: Message) -> bytes:
    body: bytes = message.SerializeToString()
    return struct.pack(">BI", 0, len(body)) + body


# A media type is case-insensitive: the front door writes it as Envoy's bridge knows it (ADR
# 0134), and Connect's answer names the lowercase type.
@pytest.mark.parametrize("content_type", ["application/proto", "Application/Proto",
                                          "APPLICATION/PROTO", "application/proto; v=1"])
def test_binary_connect_creates_a_session_that_rest_reads(stack: Stack,
                                                          content_type: str) -> None:
    task_id = unique("connect")
    response = unary(stack, "CreateSession", pb.CreateSessionRequest(task_id=task_id),
                     content_type)
    assert response.status == 200
    assert response.headers["content-type"] == "application/proto"
    session = pb.CreateSessionResponse.FromString(response.body).session
    assert session.task_id == task_id
    assert stack.api.session(session.id)["task_id"] == task_id


@pytest.mark.parametrize("content_type", ["application/proto", "Application/Proto; v=1"])
def test_binary_connect_carries_large_requests_and_answers(stack: Stack,
                                                           content_type: str) -> None:
    """A unary Connect call is one message each way, which the front door's bridge holds
    whole: calls and answers over its 64 KiB stream buffer answered 413 and 500 (a probe of
    the TypeScript client: a 100 KiB shell output, a 200 KiB publish)."""
    session_id = stack.api.new_session()["id"]
    output = "".join(f"line {n:06d} of a long build\n" for n in range(9_000))  # 252 KiB
    update = struct_pb2.Value()
    update.struct_value.update({
        "sessionUpdate": "tool_call", "toolCallId": "big", "kind": "execute",
        "status": "completed", "rawInput": {"command": "make"},
        "rawOutput": {"stdout": output, "exit_code": 0}})
    published = unary(stack, "PublishUpdate", pb.PublishUpdateRequest(
        session_id=session_id, update=update), content_type)
    assert published.status == 200, published.body[:300]
    message_id = pb.PublishUpdateResponse.FromString(published.body).message.id

    answer = unary(stack, "GetShellOutput", pb.GetShellOutputRequest(
        session_id=session_id, message_id=message_id), content_type)
    assert answer.status == 200, answer.body[:300]
    assert pb.GetShellOutputResponse.FromString(answer.body).output.stdout == output


def _refused_unread(stack: Stack, path: str, length: int | None) -> Answer:
    """The answer to a unary Connect call to `path` announcing `length` bytes and sending
    none, or, without a length, sending chunks until it is answered."""
    framing = (f"content-length: {length}" if length is not None
               else "transfer-encoding: chunked")
    chunk = b"x" * 65_536
    with socket.create_connection(("127.0.0.1", stack.rest_port), timeout=10) as connection:
        connection.sendall(
            f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{stack.rest_port}\r\n"
            "content-type: application/proto\r\nconnect-protocol-version: 1\r\n"
            f"{framing}\r\n\r\n".encode())
        if length is None:
            with contextlib.suppress(OSError):  # Envoy answers, and may close, before the end
                for _ in range(MAX_REST_BODY_BYTES // len(chunk) + 2):
                    connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        answer = http.client.HTTPResponse(connection)
        answer.begin()
        return Answer(answer.status, answer.headers, answer.read())


@pytest.mark.parametrize("length", [MAX_REST_BODY_BYTES + 1, None])
def test_a_connect_call_over_the_bridge_s_limit_is_resource_exhausted(
        stack: Stack, length: int | None) -> None:
    """Its 413 came with Envoy's text (about an internal buffer), which Connect clients read
    as UNKNOWN, "HTTP 413" (a probe of the TypeScript client); a gRPC client sending the same
    gets RESOURCE_EXHAUSTED or INVALID_ARGUMENT naming the field. A call announcing its length
    is refused from its headers, before its body is read (none is sent); one sent in chunks
    by the bridge's buffer, once it holds more than it may, after the bridge made it gRPC's."""
    answer = _refused_unread(stack, f"{SERVICE}/PublishUpdate", length)

    assert answer.status == 413
    assert answer.headers["content-type"] == "application/json"
    assert json.loads(answer.body) == {"code": "resource_exhausted", "message": OVERSIZE}


@pytest.mark.parametrize("length", [MAX_HEALTH_REQUEST_BYTES + 1, None])
def test_a_connect_health_check_over_its_bound_is_told_its_bound(
        stack: Stack, length: int | None) -> None:
    """It was told the bound of the other calls, 8 MiB (or, sent in chunks, Envoy's text)."""
    answer = _refused_unread(stack, HEALTH_CHECK_PATH, length)

    assert answer.status == 413
    assert json.loads(answer.body) == {"code": "resource_exhausted",
                                       "message": HEALTH_OVERSIZE}


def test_a_connect_message_of_the_whole_limit_reaches_the_server(stack: Stack) -> None:
    """The bridge holds the message framed as gRPC's, five bytes more: a message of 8 MiB
    less up to 4 bytes met Envoy's own text/plain 413 (an attacker's probe)."""
    session_id = stack.api.new_session()["id"]
    update = struct_pb2.Value()
    update.struct_value.update({"sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": ""}})
    request = pb.PublishUpdateRequest(session_id=session_id, update=update)
    filler = MAX_REST_BODY_BYTES - request.ByteSize()
    while True:  # the text's length prefix grows with it: find the text that fills the limit
        update.struct_value["content"]["text"] = "x" * filler
        request = pb.PublishUpdateRequest(session_id=session_id, update=update)
        if request.ByteSize() <= MAX_REST_BODY_BYTES:
            break
        filler -= request.ByteSize() - MAX_REST_BODY_BYTES
    assert request.ByteSize() == MAX_REST_BODY_BYTES

    answer = unary(stack, "PublishUpdate", request)

    # The server's own answer (an update is at most 4 MiB), in Connect's shape.
    assert answer.status == 400, answer.body[:200]
    error = json.loads(answer.body)
    assert error["code"] == "invalid_argument"
    assert error["message"].startswith("update: is ")


def test_binary_connect_errors_keep_the_code_and_the_details(stack: Stack) -> None:
    session = stack.api.new_session()
    response = unary(stack, "GetShellOutput", pb.GetShellOutputRequest(
        session_id=session["id"], message_id="msg_foreign"))
    assert response.status == 404
    assert response.headers["content-type"] == "application/json"
    error = json.loads(response.body)
    assert error["code"] == "not_found"
    [detail] = [d for d in error["details"] if d["type"].endswith("google.rpc.ResourceInfo")]
    padded = detail["value"] + "=" * (-len(detail["value"]) % 4)
    resource = error_details_pb2.ResourceInfo.FromString(base64.b64decode(padded))
    assert resource.resource_name == "msg_foreign"


@pytest.mark.parametrize("content_type", ["application/connect+proto",
                                          "Application/Connect+Proto",
                                          "application/Connect+proto"])
def test_binary_connect_streams_the_feed(stack: Stack, content_type: str) -> None:
    session = stack.api.new_session()
    request = envelope(pb.WatchMessagesRequest(session_id=session["id"], since_revision=0))
    with posting(stack, f"{SERVICE}/WatchMessages", request,
                 {"content-type": content_type, **CONNECT}) as response:
        assert response.status == 200
        assert response.headers["content-type"] == "application/connect+proto"
        flags, length = struct.unpack(">BI", response.read(5))
        assert flags == 0  # a message, not the end of the stream
        event = pb.WatchMessagesResponse.FromString(response.read(length))
        assert event.type


@pytest.mark.parametrize(("method", "content_type", "body"), [
    ("CreateSession", "application/json", b'{"taskId": "%s"}'),
    ("CreateSession", "application/json; charset=utf-8", b'{"taskId": "%s"}'),
    ("CreateSession", "Application/JSON", b'{"taskId": "%s"}'),
    ("WatchMessages", "application/connect+json", b'\x00\x00\x00\x00\x02{}'),
])
def test_json_connect_is_415_naming_the_binary_codec(
        stack: Stack, method: str, content_type: str, body: bytes) -> None:
    task_id = unique("json_connect")
    response = post(stack, f"{SERVICE}/{method}", body.replace(b"%s", task_id.encode()),
                    {"content-type": content_type, **CONNECT})
    assert response.status == 415
    assert response.headers["content-type"] == "application/json"
    error = json.loads(response.body)
    # Connect's error shape: the code by its Connect name, so a Connect client reports it.
    assert error["code"] == "invalid_argument"
    assert "application/proto" in error["message"]
    assert "Error" not in error["message"]
    assert stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 404


@pytest.mark.parametrize("content_type", ["application/proto", "Application/Proto"])
def test_a_unary_connect_call_to_the_feed_is_415_naming_the_stream_type(
        stack: Stack, content_type: str) -> None:
    # The bridge held a unary call's answer until its stream ended, which a feed never does:
    # the call hung, holding one of its caller's feeds.
    session = stack.api.new_session()
    request = pb.WatchMessagesRequest(session_id=session["id"]).SerializeToString()
    response = post(stack, f"{SERVICE}/WatchMessages", request,
                    {"content-type": content_type, **CONNECT})
    assert response.status == 415
    error = json.loads(response.body)
    assert error["code"] == "invalid_argument"
    assert "application/connect+proto" in error["message"]


def test_a_connect_get_is_405(stack: Stack) -> None:
    # Connect's GET form, JSON or binary, is refused before any codec is looked at: an <img>
    # could send it (tests/service/test_connect_get_refused.py).
    session = stack.api.new_session()
    message = urllib.parse.quote(json.dumps({"sessionId": session["id"]}))
    response = stack.api.request(
        "GET", f"{SERVICE}/GetSession?connect=v1&encoding=json&message={message}")
    assert response.status == 405
    assert response.json()["code"] == 12
    assert "POST" in response.json()["message"]


def test_a_browser_connect_client_passes_cors(stack_with: StackWith) -> None:
    origin = "http://page.example"
    stack = stack_with(SHELLEXEC_CORS_ORIGINS=origin)
    preflight = post(stack, f"{SERVICE}/CreateSession", b"", {
        "origin": origin, "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version,"
                                          "connect-timeout-ms"}, method="OPTIONS")
    assert preflight.status == 200
    allowed = preflight.headers["access-control-allow-headers"]
    assert {"connect-protocol-version", "connect-timeout-ms"} <= set(allowed.split(", "))
    response = post(stack, f"{SERVICE}/GetSession",
                    pb.GetSessionRequest(session_id="ses_missing").SerializeToString(),
                    {"content-type": "application/proto", "origin": origin, **CONNECT})
    assert response.status == 404
    assert response.headers["access-control-allow-origin"] == origin
    assert "grpc-status-details-bin" in response.headers["access-control-expose-headers"]


@pytest.mark.parametrize("content_type", ["application/proto", "application/json"])
def test_the_browser_boundary_holds_for_connect(stack: Stack, content_type: str) -> None:
    task_id = unique("foreign_connect")
    response = post(stack, f"{SERVICE}/CreateSession",
                    pb.CreateSessionRequest(task_id=task_id).SerializeToString(),
                    {"content-type": content_type, "origin": "http://evil.example", **CONNECT})
    assert response.status == 403
    assert json.loads(response.body)["code"] == 7
    assert response.headers["content-security-policy"].startswith("default-src 'self'")
    assert stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 404


def test_rest_with_a_connect_header_stays_rest(stack: Stack) -> None:
    task_id = unique("rest_connect_header")
    response = post(stack, "/api/v1/task-sessions", json.dumps({"task_id": task_id}).encode(),
                    {"content-type": "application/json", **CONNECT})
    assert response.status == 200, response.body
    assert json.loads(response.body)["session"]["task_id"] == task_id
    refused = post(stack, "/api/v1/task-sessions", b"{", {"content-type": "application/json",
                                                          **CONNECT})
    assert refused.status == 400
    assert json.loads(refused.body)["code"] == 3

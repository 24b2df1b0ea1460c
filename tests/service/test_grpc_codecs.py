"""gRPC and gRPC-Web through the real Envoy take the Protobuf codec only (docs/api.md, "gRPC
and gRPC-Web codecs"; ADR 0121): a call whose content type names another codec is answered
by the front door in gRPC's own form, INVALID_ARGUMENT with a message naming the supported
content types, and reaches nothing; the Protobuf content types still reach the service, the
gRPC-Web ones in any case and with parameters (ADR 0134), while native gRPC's must be written
in lowercase without parameters, and is otherwise refused the same way."""

from __future__ import annotations

import base64
import http.client
import json
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from shellexec.app import content_type_case
from shellexec.app.grpc_codecs import REFUSAL
from shellexec.v1 import session_pb2
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.rest import unique
from support.stack import Stack

CREATE_SESSION = "/shellexec.v1.ShellExecService/CreateSession"
INVALID_ARGUMENT = "3"
# The gRPC-Web trailer frame's flag (PROTOCOL-WEB.md): the frame holds the trailers as text.
TRAILER_FRAME = 0x80


def post(stack: Stack, path: str, body: bytes, content_type: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    connection.request("POST", path, body=body, headers={"content-type": content_type})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def framed(body: bytes) -> bytes:
    """One gRPC(-Web) data frame: no compression flag, the length, the message."""
    return struct.pack(">BI", 0, len(body)) + body


def frames(body: bytes) -> list[tuple[int, bytes]]:
    """The frames of a gRPC(-Web) answer's body: each one's flags and bytes."""
    found = []
    while body:
        flags, length = struct.unpack(">BI", body[:5])
        found.append((flags, body[5:5 + length]))
        body = body[5 + length:]
    return found


def created_session(body: bytes) -> session_pb2.Session:
    """The session of a gRPC-Web CreateSession answer whose trailer frame says OK."""
    [(message_flags, message), (trailer_flags, trailers)] = frames(body)
    assert (message_flags, trailer_flags) == (0, TRAILER_FRAME)
    assert b"grpc-status:0" in trailers
    response = pb.CreateSessionResponse()
    response.ParseFromString(message)
    return response.session


@dataclass(frozen=True)
class Http2Answer:
    status: int
    headers: dict[str, str]  # and the trailers, by lowercase name
    body: bytes


def post_http2(stack: Stack, path: str, body: bytes | None, content_type: str,
               folder: Path) -> Http2Answer:
    """A native gRPC call over HTTP/2 (curl, prior knowledge): grpc.aio's client writes its
    own content type and cannot send another spelling. With `body` None the request is its
    headers alone, ended with them: Envoy answers a refusal as soon as it has the headers and
    then resets the rest of the stream (RFC 9113, 8.1, NO_ERROR), which curl 7.88 reports as
    an error if a body was still on its way."""
    body_file = folder / f"answer-{unique('body')}"
    sent = [] if body is None else ["--data-binary", "@-"]
    run = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "--max-time", "10", "-D", "-",
         "-o", str(body_file), "-X", "POST", "-H", f"content-type: {content_type}",
         "-H", "te: trailers", *sent, f"{stack.rest_url}{path}"],
        input=body or b"", capture_output=True, check=True, timeout=30)
    status_line, *fields = run.stdout.decode().splitlines()
    protocol, status = status_line.split()[:2]
    assert protocol == "HTTP/2", status_line
    headers = {}
    for field in fields:  # the headers, a blank line, then the trailers
        name, colon, value = field.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return Http2Answer(int(status), headers, body_file.read_bytes())


def boot_state_status(stack: Stack, task_id: str) -> int:
    """200 once a session of `task_id` exists; 404 while none does."""
    return stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status


@pytest.mark.parametrize("content_type", [
    "application/grpc+json",
    "application/grpc-web+json",
    "application/grpc-web-text+json",
    "application/GRPC-Web+JSON",
    "application/grpc+cbor; charset=utf-8",
])
def test_another_codec_is_invalid_argument_naming_protobuf(stack: Stack,
                                                           content_type: str) -> None:
    task_id = unique("json_codec")
    response = post(stack, CREATE_SESSION, framed(json.dumps({"taskId": task_id}).encode()),
                    content_type)
    # gRPC's trailers-only answer: the status in the headers, no body.
    assert response.status == 200
    assert response.getheader("grpc-status") == INVALID_ARGUMENT
    assert response.getheader("grpc-message") == REFUSAL
    assert "application/grpc-web+proto" in REFUSAL
    assert stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 404


def test_a_health_check_with_another_codec_is_refused_too(stack: Stack) -> None:
    response = post(stack, "/grpc.health.v1.Health/Check", framed(b"{}"),
                    "application/grpc+json")
    assert response.getheader("grpc-status") == INVALID_ARGUMENT


# ADR 0134: a media type is case-insensitive, so every spelling of gRPC-Web's Protobuf types
# reaches the service; the answer names the type as Envoy writes it.
@pytest.mark.parametrize("content_type", [
    "application/grpc-web",
    "application/grpc-web+proto",
    "Application/GRPC-Web+Proto",
    "application/GRPC-web",
    "APPLICATION/GRPC-WEB",
    "application/grpc-web+PROTO",
    "application/grpc-web+proto; charset=utf-8",
])
def test_the_protobuf_content_types_reach_the_service(stack: Stack, content_type: str) -> None:
    task_id = unique("proto_codec")
    request = pb.CreateSessionRequest(task_id=task_id).SerializeToString()
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    connection.request("POST", CREATE_SESSION, body=framed(request),
                       headers={"content-type": content_type})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    assert response.status == 200
    assert response.getheader("content-type") == "application/grpc-web+proto"
    assert response.getheader("grpc-status") is None  # in the trailer frame: a message came
    assert created_session(body).task_id == task_id
    assert boot_state_status(stack, task_id) == 200


@pytest.mark.parametrize(("content_type", "accept"), [
    ("application/grpc-web-text", "application/grpc-web-text"),
    ("Application/GRPC-Web-Text", "Application/GRPC-Web-Text"),
    ("APPLICATION/GRPC-WEB-TEXT+PROTO", "application/grpc-web-text"),
    ("application/grpc-web-text; charset=utf-8", "application/GRPC-web-text+proto"),
])
def test_grpc_web_text_in_any_case_is_answered_in_base64(stack: Stack, content_type: str,
                                                          accept: str) -> None:
    task_id = unique("text_codec")
    request = framed(pb.CreateSessionRequest(task_id=task_id).SerializeToString())
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    connection.request("POST", CREATE_SESSION, body=base64.b64encode(request),
                       headers={"content-type": content_type, "accept": accept})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    assert response.status == 200
    assert response.getheader("content-type") == "application/grpc-web-text+proto"
    # Envoy encodes each frame on its own, padded: the message's, then the trailers'. Every
    # four characters of base64 decode on their own, padding or not.
    decoded = b"".join(base64.b64decode(body[at:at + 4]) for at in range(0, len(body), 4))
    assert created_session(decoded).task_id == task_id


@pytest.mark.parametrize("content_type", [
    "application/grpc", "application/grpc+proto", "application/grpc+PROTO"])
def test_native_grpc_in_lowercase_reaches_the_service_over_http2(
        stack: Stack, content_type: str, tmp_path: Path) -> None:
    task_id = unique("grpc_codec")
    request = framed(pb.CreateSessionRequest(task_id=task_id).SerializeToString())
    answer = post_http2(stack, CREATE_SESSION, request, content_type, tmp_path)
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/grpc"
    assert answer.headers["grpc-status"] == "0"  # a trailer, after the message
    [(flags, message)] = frames(answer.body)
    assert flags == 0  # a message: native gRPC's trailers are HTTP/2 trailers, not a frame
    assert pb.CreateSessionResponse.FromString(message).session.task_id == task_id
    assert boot_state_status(stack, task_id) == 200


NATIVE_SPELLINGS = [
    "Application/GRPC",
    "application/GRPC",
    "APPLICATION/GRPC+PROTO",
    "application/Grpc+proto",
    "application/grpc; charset=utf-8",
]


@pytest.mark.parametrize("content_type", NATIVE_SPELLINGS)
def test_native_grpc_otherwise_spelled_is_invalid_argument_over_http2(
        stack: Stack, content_type: str, tmp_path: Path) -> None:
    """The route looks at the headers only; the test below sends a message too and checks
    that nothing reaches the service."""
    answer = post_http2(stack, CREATE_SESSION, None, content_type, tmp_path)
    # gRPC's trailers-only answer: the status in the headers, no body.
    assert answer.status == 200
    assert answer.headers["grpc-status"] == INVALID_ARGUMENT
    assert answer.headers["grpc-message"] == content_type_case.REFUSAL
    assert "application/grpc or application/grpc+proto" in content_type_case.REFUSAL
    assert answer.body == b""


@pytest.mark.parametrize("content_type", NATIVE_SPELLINGS)
def test_native_grpc_otherwise_spelled_reaches_nothing(stack: Stack, content_type: str) -> None:
    """Over HTTP/1.1, carrying a message: the refusal reads no body and creates nothing."""
    task_id = unique("grpc_spelling")
    response = post(stack, CREATE_SESSION,
                    framed(pb.CreateSessionRequest(task_id=task_id).SerializeToString()),
                    content_type)
    assert response.status == 200
    assert response.getheader("grpc-status") == INVALID_ARGUMENT
    assert response.getheader("grpc-message") == content_type_case.REFUSAL
    assert boot_state_status(stack, task_id) == 404


def test_rest_keeps_its_content_type_whatever_it_is(stack: Stack) -> None:
    """The spelling is rewritten on the gRPC paths only: a REST call sent with a gRPC-Web type
    in mixed case is transcoded as before, not turned into a gRPC-Web call."""
    task_id = unique("rest_spelling")
    response = post(stack, "/api/v1/task-sessions", json.dumps({"task_id": task_id}).encode(),
                    "Application/GRPC-Web+Proto")
    assert response.status == 200
    assert response.getheader("content-type") == "application/json"
    assert boot_state_status(stack, task_id) == 200

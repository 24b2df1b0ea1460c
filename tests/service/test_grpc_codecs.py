"""gRPC and gRPC-Web through the real Envoy take the Protobuf codec only (docs/api.md, "gRPC
and gRPC-Web codecs"; ADR 0121): a call whose content type names another codec is answered
by the front door in gRPC's own form, INVALID_ARGUMENT with a message naming the supported
content types, and reaches nothing; the Protobuf content types still reach the service."""

from __future__ import annotations

import http.client
import json
import struct

import pytest

from shellexec.app.grpc_codecs import REFUSAL
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.rest import unique
from support.stack import Stack

CREATE_SESSION = "/shellexec.v1.ShellExecService/CreateSession"
INVALID_ARGUMENT = "3"


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


@pytest.mark.parametrize("content_type", ["application/grpc-web", "application/grpc-web+proto"])
def test_the_protobuf_content_types_reach_the_service(stack: Stack, content_type: str) -> None:
    task_id = unique("proto_codec")
    request = pb.CreateSessionRequest(task_id=task_id).SerializeToString()
    response = post(stack, CREATE_SESSION, framed(request), content_type)
    assert response.status == 200
    assert response.getheader("grpc-status") is None  # in the trailer frame: a message came
    assert stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 200

"""Requests are served uncompressed only, in every protocol (docs/api.md, "Limits"): a
compressed one is refused before anything inflates it, in its protocol's own error form, and
stores nothing. A gzip message of 16 KB inflated to the server's whole message limit (16 MiB),
so a few hundred kilobytes a second kept the server parsing, and Connect's 8 MiB counted the
compressed bytes. The front door refuses gRPC and gRPC-Web (UNIMPLEMENTED in gRPC's
trailers-only form), Connect (`unimplemented` in Connect's error body, or its end-of-stream
message for a stream) and REST (415); the server's own port refuses gRPC's compression
itself (UNIMPLEMENTED, gRPC's own message)."""

from __future__ import annotations

import gzip
import http.client
import json
import struct

import grpc
import pytest

from shellexec.app.connect_protocol import COMPRESSED_REFUSAL as CONNECT_REFUSAL
from shellexec.app.envoy import COMPRESSED_BODY_REFUSAL
from shellexec.app.grpc_codecs import COMPRESSED_REFUSAL as GRPC_REFUSAL
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.rest import unique
from support.stack import Stack

# The front door's routes and gRPC's own options decide: the same whichever engine stores.
pytestmark = pytest.mark.sqlite_only

CREATE_SESSION = "/shellexec.v1.ShellExecService/CreateSession"
WATCH_MESSAGES = "/shellexec.v1.ShellExecService/WatchMessages"
UNIMPLEMENTED = "12"
# A Connect stream's end-of-stream message.
END_STREAM = 0x02
# The zeros of the decompression bomb's unknown field: with the rest, just under the server's
# 16 MiB message limit, as the attack sent.
BOMB_BYTES = 15 * 1024 * 1024


def stored(stack: Stack, task_id: str) -> bool:
    """Whether a session of `task_id` exists."""
    return stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 200


def create_request(task_id: str) -> bytes:
    serialized: bytes = pb.CreateSessionRequest(task_id=task_id).SerializeToString()
    return serialized


def framed(message: bytes, compressed: bool) -> bytes:
    """One gRPC(-Web) or Connect stream frame: the compression flag, the length, the bytes."""
    return struct.pack(">BI", int(compressed), len(message)) + message


def post(stack: Stack, path: str, body: bytes, headers: dict[str, str]
         ) -> tuple[http.client.HTTPResponse, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response, response.read()
    finally:
        connection.close()


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@pytest.mark.parametrize("compression", [grpc.Compression.Gzip, grpc.Compression.Deflate])
def test_a_compressed_grpc_call_through_the_front_door_is_unimplemented(
        stack: Stack, compression: grpc.Compression) -> None:
    task_id = unique("gzip_grpc")
    with (grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}") as channel,
          pytest.raises(grpc.RpcError) as refused):
        pb_grpc.ShellExecServiceStub(channel).CreateSession(
            pb.CreateSessionRequest(task_id=task_id), compression=compression, timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert refused.value.details() == GRPC_REFUSAL
    assert not stored(stack, task_id)


@pytest.mark.parametrize("compression", [grpc.Compression.Gzip, grpc.Compression.Deflate])
def test_a_compressed_grpc_call_to_the_server_s_port_is_unimplemented(
        stack: Stack, compression: grpc.Compression) -> None:
    task_id = unique("gzip_direct")
    with (grpc.insecure_channel(stack.grpc_target) as channel,
          pytest.raises(grpc.RpcError) as refused):
        pb_grpc.ShellExecServiceStub(channel).CreateSession(
            pb.CreateSessionRequest(task_id=task_id), compression=compression, timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    algorithm = "gzip" if compression == grpc.Compression.Gzip else "deflate"
    assert refused.value.details() == f"Compression algorithm '{algorithm}' is disabled."
    assert not stored(stack, task_id)


def test_uncompressed_grpc_calls_still_pass_on_both_ports(stack: Stack) -> None:
    for port in (stack.rest_port, stack.grpc_port):
        task_id = unique("plain_grpc")
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            pb_grpc.ShellExecServiceStub(channel).CreateSession(
                pb.CreateSessionRequest(task_id=task_id),
                compression=grpc.Compression.NoCompression, timeout=10)
        assert stored(stack, task_id)


@pytest.mark.parametrize("port", ["front door", "server"])
def test_a_decompression_bomb_is_refused_unread(stack: Stack, port: str) -> None:
    """The attack itself: a 15 MiB message that gzip sends as 16 KB, which the server inflated,
    parsed (its unknown field skipped) and served. gRPC's own client compresses it here."""
    task_id = unique("bomb")
    message = create_request(task_id) + _varint((1000 << 3) | 2) + _varint(BOMB_BYTES)
    message += bytes(BOMB_BYTES)
    assert len(gzip.compress(message)) < 20_000
    target = f"127.0.0.1:{stack.rest_port if port == 'front door' else stack.grpc_port}"
    with grpc.insecure_channel(target) as channel, pytest.raises(grpc.RpcError) as refused:
        channel.unary_unary(CREATE_SESSION)(message, compression=grpc.Compression.Gzip,
                                            timeout=20)
    assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    if port == "front door":
        assert refused.value.details() == GRPC_REFUSAL
    assert not stored(stack, task_id)


@pytest.mark.parametrize("content_type", ["application/grpc-web+proto", "application/grpc-web",
                                          "application/grpc-web-text"])
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "GZIP", "identity, gzip", "snappy"])
def test_a_compressed_grpc_web_call_is_unimplemented_and_stores_nothing(
        stack: Stack, content_type: str, encoding: str) -> None:
    task_id = unique("gzip_web")
    body = framed(gzip.compress(create_request(task_id)), True)
    response, answer = post(stack, CREATE_SESSION, body,
                            {"content-type": content_type, "grpc-encoding": encoding})
    # gRPC's trailers-only answer: the status in the headers, no body.
    assert response.status == 200
    assert response.getheader("grpc-status") == UNIMPLEMENTED
    assert response.getheader("grpc-message") == GRPC_REFUSAL
    assert response.getheader("grpc-accept-encoding") == "identity"
    assert answer == b""
    assert not stored(stack, task_id)


@pytest.mark.parametrize("path", ["/shellexec.v1.ShellExecService/",
                                  f"{CREATE_SESSION}/x"])
def test_a_compressed_call_to_a_path_the_grpc_routes_take_by_prefix_is_unimplemented(
        stack: Stack, path: str) -> None:
    """The route matched the gRPC paths exactly; these reached the server, which could not
    read `GZIP` (a review)."""
    response, answer = post(stack, path, framed(gzip.compress(create_request("x")), True),
                            {"content-type": "application/grpc-web+proto",
                             "grpc-encoding": "GZIP"})
    assert response.getheader("grpc-status") == UNIMPLEMENTED
    assert response.getheader("grpc-message") == GRPC_REFUSAL
    assert answer == b""


def test_a_grpc_web_call_saying_identity_passes(stack: Stack) -> None:
    task_id = unique("identity_web")
    response, _ = post(stack, CREATE_SESSION, framed(create_request(task_id), False),
                       {"content-type": "application/grpc-web+proto",
                        "grpc-encoding": "identity"})
    assert response.status == 200
    assert stored(stack, task_id)


@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate", "GZIP", "gzip, identity"])
def test_a_compressed_unary_connect_call_is_unimplemented_and_stores_nothing(
        stack: Stack, encoding: str) -> None:
    task_id = unique("gzip_connect")
    response, answer = post(stack, CREATE_SESSION, gzip.compress(create_request(task_id)),
                            {"content-type": "application/proto",
                             "connect-protocol-version": "1", "content-encoding": encoding})
    assert response.status == 501
    assert response.getheader("content-type") == "application/json"
    assert response.getheader("accept-encoding") == "identity"
    assert json.loads(answer) == {"code": "unimplemented", "message": CONNECT_REFUSAL}
    assert not stored(stack, task_id)


def test_the_connect_bomb_over_the_body_limit_is_refused(stack: Stack) -> None:
    """16 KB of gzip that were 15 MiB, through the 8 MiB a unary Connect call may send."""
    task_id = unique("connect_bomb")
    message = create_request(task_id) + _varint((1000 << 3) | 2) + _varint(BOMB_BYTES)
    response, answer = post(stack, CREATE_SESSION, gzip.compress(message + bytes(BOMB_BYTES)),
                            {"content-type": "application/proto",
                             "connect-protocol-version": "1", "content-encoding": "gzip"})
    assert response.status == 501
    assert json.loads(answer)["code"] == "unimplemented"
    assert not stored(stack, task_id)


def test_a_unary_connect_call_saying_identity_passes(stack: Stack) -> None:
    task_id = unique("identity_connect")
    response, _ = post(stack, CREATE_SESSION, create_request(task_id),
                       {"content-type": "application/proto", "connect-protocol-version": "1",
                        "content-encoding": "identity"})
    assert response.status == 200
    assert stored(stack, task_id)


def test_a_compressed_connect_stream_ends_unimplemented(stack: Stack) -> None:
    request = pb.WatchMessagesRequest(session_id=stack.api.new_session()["id"])
    response, answer = post(stack, WATCH_MESSAGES,
                            framed(gzip.compress(request.SerializeToString()), True),
                            {"content-type": "application/connect+proto",
                             "connect-protocol-version": "1",
                             "connect-content-encoding": "gzip"})
    # A Connect stream's error: HTTP 200, and the end-of-stream message alone.
    assert response.status == 200
    assert response.getheader("content-type") == "application/connect+proto"
    assert response.getheader("connect-accept-encoding") == "identity"
    flags, length = struct.unpack(">BI", answer[:5])
    assert (flags, length) == (END_STREAM, len(answer) - 5)
    assert json.loads(answer[5:]) == {"error": {"code": "unimplemented",
                                                "message": CONNECT_REFUSAL}}


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_a_compressed_rest_body_is_415_and_stores_nothing(stack: Stack, encoding: str) -> None:
    """Nothing decompresses a REST body: before, the transcoder read the compressed bytes as
    JSON (400, echoing them); a body labelled compressed but sent plain was taken as it was."""
    task_id = unique("gzip_rest")
    for body in (json.dumps({"task_id": task_id}).encode(),
                 gzip.compress(json.dumps({"task_id": task_id}).encode())):
        response, answer = post(stack, "/api/v1/task-sessions", body,
                                {"content-type": "application/json",
                                 "content-encoding": encoding})
        assert response.status == 415
        assert response.getheader("accept-encoding") == "identity"
        assert json.loads(answer) == {"code": 3, "message": COMPRESSED_BODY_REFUSAL}
    assert not stored(stack, task_id)


@pytest.mark.parametrize(("content_type", "body"), [
    ("application/proto", b""), ("application/connect+proto", framed(b"", False))])
def test_a_connect_call_naming_grpc_s_encoding_is_refused_and_harms_no_later_call(
        stack: Stack, content_type: str, body: bytes) -> None:
    """The bridge passed a Connect call's own grpc-encoding on to the server; one it could not
    read (`GZIP`) left the front door's connection to it failing later calls that named an
    encoding, `INTERNAL` "Error parsing 'grpc-encoding' metadata"."""
    response, _ = post(stack, CREATE_SESSION, body,
                       {"content-type": content_type, "connect-protocol-version": "1",
                        "grpc-encoding": "GZIP"})
    assert response.status in (200, 501)
    assert response.getheader("connect-accept-encoding" if response.status == 200
                              else "accept-encoding") == "identity"
    task_id = unique("after_gzip")
    response, _ = post(stack, CREATE_SESSION, framed(create_request(task_id), False),
                       {"content-type": "application/grpc-web+proto",
                        "grpc-encoding": "identity"})
    assert response.getheader("grpc-status") is None  # in the trailer frame: a message came
    assert stored(stack, task_id)

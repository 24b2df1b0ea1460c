"""A request with more header fields than MAX_REQUEST_HEADER_FIELDS is refused by the front
door saying so (431 over REST, RESOURCE_EXHAUSTED over gRPC), and one it accepts is never
refused further on for what Envoy adds to it: with Envoy's default limit of 100 fields, its
own additions made 95 small headers a 500 `{"code":13,"message":""}` over REST (the token
check refused to add its ticket), and 88 an UNKNOWN, 91 a reset stream over native gRPC."""

from __future__ import annotations

import http.client
import json

import grpc
import pytest

from shellexec.app.envoy import HEADER_FIELDS_READ
from shellexec.rules.limits import MAX_REQUEST_HEADER_FIELDS
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.rest import unique
from support.stack import Stack

MOST = MAX_REQUEST_HEADER_FIELDS
# What grpcio sends of its own, besides the pseudo-headers, with a deadline: te,
# content-type, user-agent, grpc-accept-encoding and grpc-timeout.
GRPCIO_OWN = 5
# Counts of header fields over the limit that a broken front door answered opaquely, up to
# what Envoy reads of a request (its pseudo-headers and own two fields included).
OVER = sorted({*range(MOST + 1, MOST + 8), *range(86, 102), *range(MOST + 8, 2 * MOST, 9),
               HEADER_FIELDS_READ - 8})


@pytest.fixture(scope="module")
def reader(secured: Stack) -> tuple[str, str]:
    """A token that may read, and a session it reads."""
    token = secured.create_token(unique("headers"), "admin")
    return token, secured.api_as(token).new_session()["id"]


def rest_get(stack: Stack, path: str, token: str, fields: int) -> tuple[int, bytes]:
    """GET `path` with exactly `fields` header fields besides Host: the token and padding."""
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=30)
    try:
        connection.putrequest("GET", path, skip_accept_encoding=True)
        connection.putheader("authorization", f"Bearer {token}")
        for number in range(fields - 1):
            connection.putheader(f"x-h{number}", "b")
        connection.endheaders()
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def grpc_get(stack: Stack, session_id: str, token: str, fields: int) -> grpc.RpcError | None:
    """GetSession through the front door with `fields` header fields in all (grpcio's own,
    the token, padding); the call's error, or None."""
    padding = [(f"x-h{number}", "b") for number in range(fields - GRPCIO_OWN - 1)]
    with grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}") as channel:
        try:
            pb_grpc.ShellExecServiceStub(channel).GetSession(
                pb.GetSessionRequest(session_id=session_id),
                metadata=[("authorization", f"Bearer {token}"), *padding], timeout=30)
        except grpc.RpcError as error:
            return error
    return None


def too_many(fields: int) -> str:
    return (f"a request through the front door may have at most {MOST} header fields "
            f"besides Host and HTTP/2's pseudo-headers; this one has {fields}")


@pytest.mark.sqlite_only  # Envoy's limits: the same whichever engine stores data
def test_rest_takes_the_most_header_fields_and_refuses_one_more_saying_so(
        secured: Stack, reader: tuple[str, str]) -> None:
    token, session_id = reader
    path = f"/api/v1/task-sessions/{session_id}"
    status, body = rest_get(secured, path, token, MOST)
    assert status == 200, body[:300]
    assert json.loads(body)["session"]["id"] == session_id

    status, body = rest_get(secured, path, token, MOST + 1)
    assert status == 431, body[:300]
    assert json.loads(body) == {"code": 8, "message": too_many(MOST + 1)}


@pytest.mark.sqlite_only
def test_a_connect_call_over_the_header_fields_is_told_in_connect_s_form(
        secured: Stack, reader: tuple[str, str]) -> None:
    """It got the REST body (`"code": 8`), which a Connect client reads as an unknown error."""
    token, session_id = reader
    body = pb.GetSessionRequest(session_id=session_id).SerializeToString()
    connection = http.client.HTTPConnection("127.0.0.1", secured.rest_port, timeout=30)
    try:
        connection.putrequest("POST", "/shellexec.v1.ShellExecService/GetSession",
                              skip_accept_encoding=True)
        own = {"authorization": f"Bearer {token}", "content-type": "application/proto",
               "connect-protocol-version": "1", "content-length": str(len(body))}
        for name, value in own.items():
            connection.putheader(name, value)
        for number in range(MOST + 1 - len(own)):
            connection.putheader(f"x-h{number}", "b")
        connection.endheaders(body)
        answer = connection.getresponse()
        status, text = answer.status, answer.read()
    finally:
        connection.close()
    assert status == 431, text[:300]
    assert json.loads(text) == {"code": "resource_exhausted", "message": too_many(MOST + 1)}


@pytest.mark.sqlite_only
def test_native_grpc_takes_the_most_header_fields_and_refuses_one_more_saying_so(
        secured: Stack, reader: tuple[str, str]) -> None:
    token, session_id = reader
    assert grpc_get(secured, session_id, token, MOST) is None

    error = grpc_get(secured, session_id, token, MOST + 1)
    assert error is not None
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    assert error.details() == too_many(MOST + 1)


@pytest.mark.sqlite_only
def test_more_header_fields_are_never_an_opaque_failure(secured: Stack,
                                                        reader: tuple[str, str]) -> None:
    token, session_id = reader
    path = f"/api/v1/task-sessions/{session_id}"
    for fields in OVER:
        status, body = rest_get(secured, path, token, fields)
        assert (status, json.loads(body)) == (431, {"code": 8, "message": too_many(fields)})
        error = grpc_get(secured, session_id, token, fields)
        assert error is not None
        assert (error.code(), error.details()) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED, too_many(fields)), fields

"""A gRPC, gRPC-Web or Connect call through the front door whose request is not sent whole within
Envoy's REQUEST_TIMEOUT_SECONDS ends DEADLINE_EXCEEDED, as the server ends one on its own port
(docs/api.md, "Limits"), not UNKNOWN "request timeout": Envoy derives UNKNOWN from its 408.
The server waits as long itself, so through the front door either could answer first (an
operator's probe saw UNKNOWN every time); here the server is stopped, so Envoy's answer is
the one tested. REST keeps its 408 with the JSON body."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterator

import grpc
import pytest

from shellexec.app.envoy import REQUEST_TIMEOUT_SECONDS
from shellexec.app.front_door_errors import REQUEST_NOT_SENT

from support.stack import Stack

GET_SESSION = "/shellexec.v1.ShellExecService/GetSession"
# Bounds a broken front door's wait; a working one answers at its request timeout.
TIMEOUT_SECONDS = REQUEST_TIMEOUT_SECONDS * 3


@contextlib.contextmanager
def stopped(stack: Stack) -> Iterator[None]:
    """The stack's server stopped (SIGSTOP) within, so that nothing but Envoy answers."""
    assert stack.server is not None
    os.kill(stack.server.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(stack.server.pid, signal.SIGCONT)


@pytest.mark.slow  # waits for the front door's request timeout
@pytest.mark.sqlite_only  # Envoy's timer: the same whichever engine stores the data
def test_rpc_calls_whose_request_never_ends_are_deadline_exceeded(
        stack_with: Callable[..., Stack]) -> None:
    stack = stack_with()
    done = threading.Event()

    def never_sent() -> Iterator[bytes]:
        done.wait(TIMEOUT_SECONDS)
        return
        yield b""  # a generator that sends nothing

    with (grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}") as channel, stopped(stack),
          socket.create_connection(("127.0.0.1", stack.rest_port),
                                   timeout=TIMEOUT_SECONDS) as grpc_web,
          socket.create_connection(("127.0.0.1", stack.rest_port),
                                   timeout=TIMEOUT_SECONDS) as connect):
        # A gRPC-Web and a Connect call over HTTP/1.1 whose chunked body never ends, and a
        # native gRPC call.
        grpc_web.sendall(
            f"POST {GET_SESSION} HTTP/1.1\r\nhost: 127.0.0.1:{stack.rest_port}\r\n"
            "content-type: application/grpc-web+proto\r\nx-grpc-web: 1\r\n"
            "transfer-encoding: chunked\r\n\r\n".encode())
        connect.sendall(
            f"POST {GET_SESSION} HTTP/1.1\r\nhost: 127.0.0.1:{stack.rest_port}\r\n"
            "content-type: application/proto\r\nconnect-protocol-version: 1\r\n"
            "transfer-encoding: chunked\r\n\r\n".encode())
        call = channel.stream_unary(GET_SESSION)
        try:
            with pytest.raises(grpc.RpcError) as raised:
                call(never_sent(), timeout=TIMEOUT_SECONDS)
        finally:
            done.set()
        answer = http.client.HTTPResponse(grpc_web)
        answer.begin()
        connect_answer = http.client.HTTPResponse(connect)
        connect_answer.begin()
        connect_body = connect_answer.read()
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert raised.value.details() == REQUEST_NOT_SENT
    assert (answer.status, answer.headers["grpc-status"]) == (200, "4")
    assert urllib.parse.unquote(answer.headers["grpc-message"]) == REQUEST_NOT_SENT
    assert answer.read() == b""  # no body a gRPC-Web client would read as messages
    # Connect's own form of the code, from the bridge.
    assert connect_answer.status == 408
    assert json.loads(connect_body) == {"code": "deadline_exceeded", "message": REQUEST_NOT_SENT}

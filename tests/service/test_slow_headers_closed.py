"""A connection that does nothing is closed by the front door instead of being held for good:
one that never finishes its request's headers (a slow-loris client) once
REQUEST_HEADERS_TIMEOUT_SECONDS have passed, one whose body never finishes once
REQUEST_TIMEOUT_SECONDS have, and one that never sends a byte, which neither timer covers,
once IDLE_CONNECTION_TIMEOUT_SECONDS have (ADR 0127); on the API's listener and on Envoy's
statistics listener alike (which waits for no body), and every other client is served
meanwhile."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import pytest

from shellexec.app.envoy import (
    IDLE_CONNECTION_TIMEOUT_SECONDS,
    REQUEST_HEADERS_TIMEOUT_SECONDS,
    REQUEST_TIMEOUT_SECONDS,
)

from support.stack import Stack, free_port

HELD = 25
# Generous: the close comes at the timeout; this only bounds a broken front door's wait.
WAIT_SECONDS = max(REQUEST_HEADERS_TIMEOUT_SECONDS, REQUEST_TIMEOUT_SECONDS,
                   IDLE_CONNECTION_TIMEOUT_SECONDS) * 3


def held_connections(port: int, first_bytes: bytes) -> list[socket.socket]:
    held = [socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS)
            for _ in range(HELD)]
    for connection in held:
        if first_bytes:
            connection.sendall(first_bytes)
    return held


def partial_headers(port: int) -> bytes:
    return f"GET /api/v1/task-sessions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()


def unfinished_body(port: int) -> bytes:
    return (f"POST /api/v1/task-sessions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{").encode()


@pytest.mark.slow  # waits for the timeouts
@pytest.mark.sqlite_only  # Envoy's timeouts: the same whichever engine stores the data
def test_connections_that_never_finish_a_request_or_never_send_are_closed(
        stack_with: Callable[..., Stack]) -> None:
    stats_port = free_port()
    stack = stack_with(SHELLEXEC_ENVOY_METRICS_PORT=str(stats_port))
    held: list[socket.socket] = []
    try:
        for port in (stack.rest_port, stats_port):
            held += held_connections(port, partial_headers(port))
            held += held_connections(port, b"")  # silent: not a byte sent
        # (the statistics listener answers any POST at once: no body is ever waited for)
        held += held_connections(stack.rest_port, unfinished_body(stack.rest_port))
        assert stack.api.request("GET", "/api/v1/task-sessions?limit=1").status == 200
        started = time.monotonic()
        for connection in held:
            answer = connection.recv(1 << 16)  # b"" once closed, or Envoy's 408
            assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:100]
        assert time.monotonic() - started < WAIT_SECONDS
    finally:
        for connection in held:
            connection.close()

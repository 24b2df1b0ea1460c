"""A connection that never finishes its request's headers (a slow-loris client) is closed by
the front door once REQUEST_HEADERS_TIMEOUT_SECONDS have passed, instead of being held for
good; every other client is served meanwhile."""

from __future__ import annotations

import socket
import time

import pytest

from shellexec.app.envoy import REQUEST_HEADERS_TIMEOUT_SECONDS

from support.stack import Stack

HELD = 50
# Generous: the close comes at the timeout; this only bounds a broken front door's wait.
WAIT_SECONDS = REQUEST_HEADERS_TIMEOUT_SECONDS * 4


@pytest.mark.slow  # waits for the headers timeout
@pytest.mark.sqlite_only  # Envoy's timeout: the same whichever engine stores the data
def test_a_connection_that_never_finishes_its_headers_is_closed(stack: Stack) -> None:
    partial = f"GET /api/v1/task-sessions HTTP/1.1\r\nHost: 127.0.0.1:{stack.rest_port}\r\n"
    held = [socket.create_connection(("127.0.0.1", stack.rest_port), timeout=WAIT_SECONDS)
            for _ in range(HELD)]
    try:
        for connection in held:
            connection.sendall(partial.encode())
        assert stack.api.request("GET", "/api/v1/task-sessions?limit=1").status == 200
        started = time.monotonic()
        for connection in held:
            answer = connection.recv(1 << 16)  # b"" once closed, or Envoy's 408
            assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:100]
        assert time.monotonic() - started < WAIT_SECONDS
    finally:
        for connection in held:
            connection.close()

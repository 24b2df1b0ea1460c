"""Review 7 reproductions of the front door's token check (ADR 0119), with authentication on:
- a request head the check endpoint will not read (over its 16 KiB) is answered 503, "the
  server is down", instead of what the request gets without the check: a valid token's long
  query string loses its 404, and an over-long token its documented 401;
- the health route, open without a token, still lets a client without one make Envoy hold a
  body of up to 64 KiB per request, on as many connections as the front door takes."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from support.rest import unique
from support.stack import Stack, running_stack

# Over the check endpoint's 16 KiB head, well under Envoy's own 60 KiB header limit.
LONG = 20_000
# Held health requests, and the part of each body sent (under the health route's 64 KiB).
HELD = 1000
SENT = 60_000


@pytest.fixture
def secured(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path, SHELLEXEC_AUTH="on", **new_database()) as stack:
        yield stack


@pytest.mark.sqlite_only  # Envoy and the token check: the same whichever engine stores data
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
    assert json.loads(answer.body)["code"] == 16


def _received_bytes(stack: Stack) -> int:
    """How many bytes Envoy's front door has read from its clients (its admin statistics)."""
    name = "http.front_door.downstream_cx_rx_bytes_total"
    with socket.socket(socket.AF_UNIX) as admin:
        admin.settimeout(10)
        admin.connect(str(stack.admin_socket))
        admin.sendall(f"GET /stats?filter={name} HTTP/1.1\r\nHost: admin\r\n"
                      "Connection: close\r\n\r\n".encode())
        answer = b""
        while chunk := admin.recv(1 << 16):
            answer += chunk
    lines = answer.decode().partition("\r\n\r\n")[2].splitlines()
    return sum(int(line.split(": ")[1]) for line in lines if line.startswith(f"{name}: "))


def _resident_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError(f"no VmRSS for process {pid}")


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_held_health_bodies_without_a_token_cost_envoy_little_memory(secured: Stack) -> None:
    assert secured.envoy is not None
    head = (f"POST /grpc.health.v1.Health/Check HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{secured.rest_port}\r\n"
            f"content-type: application/grpc-web+proto\r\ncontent-length: 1000000\r\n\r\n")
    before, received = _resident_mib(secured.envoy.pid), _received_bytes(secured)
    with ExitStack() as exits:
        for _ in range(HELD):
            connection = exits.enter_context(
                socket.create_connection(("127.0.0.1", secured.rest_port), timeout=10))
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                connection.sendall(head.encode() + b"\x00" + b"x" * SENT)
        deadline = time.monotonic() + 30
        while _received_bytes(secured) < received + HELD * SENT and time.monotonic() < deadline:
            time.sleep(0.1)  # until Envoy has read what the clients sent (or refused it)
        grown = _resident_mib(secured.envoy.pid) - before
    # 1000 bodies of 60 KB are 57 MiB if Envoy holds them.
    assert grown < 24, f"{HELD} held health bodies without a token grew Envoy by {grown} MiB"

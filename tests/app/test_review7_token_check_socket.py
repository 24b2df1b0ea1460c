"""Review 7 reproduction: the token check endpoint (app/token_check.py, ADR 0119) takes any
number of connections and keeps each one's unfinished head (up to 16 KiB, twice that in the
transport) for 60 seconds. Envoy needs at most its cluster's connection limit, and sends a
check's head at once; a hostile local peer of the socket makes the server hold memory and
file descriptors instead."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from shellexec.app.token_check import MAX_CHECK_HEAD_BYTES, socket_path

from support.stack import Stack, running_stack

PEERS = 2000


@pytest.fixture
def secured(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path, SHELLEXEC_AUTH="on", **new_database()) as stack:
        yield stack


def _resident_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def _answer(path: Path, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as check:
        check.settimeout(10)
        check.connect(str(path))
        check.sendall(request)
        return check.recv(1 << 16)


@pytest.mark.slow
@pytest.mark.sqlite_only  # the endpoint is the same whichever engine stores the tokens
def test_unfinished_heads_of_many_peers_cost_the_server_little(secured: Stack) -> None:
    assert secured.server is not None
    path = socket_path(secured.admin_socket, secured.grpc_port)
    unfinished = b"GET /check/ HTTP/1.1\r\nx-pad: " + b"a" * (MAX_CHECK_HEAD_BYTES - 1024)
    before = _resident_mib(secured.server.pid)
    with ExitStack() as exits:
        for _ in range(PEERS):
            peer = exits.enter_context(socket.socket(socket.AF_UNIX))
            peer.connect(str(path))
            peer.sendall(unfinished)
        # A complete check answered: the server has taken every peer before it.
        assert _answer(path, b"GET /check/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 401")
        grown = _resident_mib(secured.server.pid) - before
    assert grown < 16, f"{PEERS} unfinished check heads grew the server by {grown} MiB"

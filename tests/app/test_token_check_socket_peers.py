"""The token check endpoint (app/token_check.py, ADR 0119) against a hostile local peer of its
socket (review 7): it serves at most MAX_CONNECTIONS connections, closing the rest at once,
and gives a head HEAD_SECONDS to arrive, so thousands of unfinished heads cost the server
little memory and no file descriptors beyond the cap, and checks are answered again once
those heads have timed out."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from shellexec.app.token_check import HEAD_SECONDS, MAX_CHECK_HEAD_BYTES, socket_path

from support.memory import rss_mib
from support.stack import Stack, running_stack

PEERS = 2000


@pytest.fixture
def secured(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path, SHELLEXEC_AUTH="on", **new_database()) as stack:
        yield stack


def _answer(path: Path, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as check:
        check.settimeout(10)
        check.connect(str(path))
        check.sendall(request)
        return check.recv(1 << 16)


def _answered_once_free(path: Path) -> bytes:
    """The answer to a complete check, asked until the endpoint has a connection free again
    (its cap frees as unfinished heads time out)."""
    deadline = time.monotonic() + HEAD_SECONDS * 6
    while True:
        # A full listen backlog refuses a connect at once (EAGAIN): not free yet either.
        with contextlib.suppress(ConnectionError, BlockingIOError, TimeoutError):
            answer = _answer(path, b"GET /check/ HTTP/1.1\r\n\r\n")
            if answer:
                return answer
        assert time.monotonic() < deadline, "no check answered after the heads timed out"
        time.sleep(0.2)


@pytest.mark.slow  # waits for the unfinished heads to time out
@pytest.mark.sqlite_only  # the endpoint is the same whichever engine stores the tokens
def test_unfinished_heads_of_many_peers_cost_the_server_little(secured: Stack) -> None:
    assert secured.server is not None
    path = socket_path(secured.admin_socket, secured.grpc_port)
    unfinished = b"GET /check/ HTTP/1.1\r\nx-pad: " + b"a" * (MAX_CHECK_HEAD_BYTES - 1024)
    before = rss_mib(secured.server.pid)
    with ExitStack() as exits:
        for _ in range(PEERS):
            peer = exits.enter_context(socket.socket(socket.AF_UNIX))
            with contextlib.suppress(ConnectionError):  # past the cap: closed at once
                peer.connect(str(path))
                peer.sendall(unfinished)
        grown = rss_mib(secured.server.pid) - before
        assert grown < 16, f"{PEERS} unfinished check heads grew the server by {grown} MiB"
        assert _answered_once_free(path).startswith(b"HTTP/1.1 401")

"""Watchers that stop reading cost bounded memory, in Envoy and in the server, and are ended;
a watcher that resumes by revision still gets every event (docs/api.md "Limits", ADR 0046).

Twenty SSE watchers open the feed through Envoy on sockets with a small receive buffer and
never read, while 30 MB of output is published in 4 KiB deltas: about 7,300 events of about
1.6 KB, three times what Envoy's and the kernel's buffers hold for a watcher here (4 MiB of
`tcp_wmem`; with 10 MB a watcher was sent every event). The events stay small on purpose: a
watcher's live queue may hold 2 MiB of larger ones (ADR 0133; before it, 1,024 of any size,
ADR 0046 "Since"), half of the few MB this test allows, and an allocator keeps much of the
heap it grew to for them. The
server's resident memory (VmRSS) is compared before and after. Envoy's heap in use (live, from
its admin `/memory`, not the `server.memory_allocated` statistic, which is refreshed only at
each five-second stats flush) is sampled while the output is published: its peak is bounded,
and once the watchers are ended and their clients gone it must fall back to where it was.

The same is done once beforehand, with twenty other stalled watchers, so that the server's
caches have settled before "before" is read. Envoy's resident memory is bounded by its heap
peak, not by a few MB: its allocator keeps the pages it grew to for the largest round so far
and reuses them, so VmRSS rises exactly when a round peaks higher than every earlier one
(measured: peaks of 1.4 to 11.5 MiB from run to run, so a second round grew VmRSS by 0 to
9.7 MB after a first round that peaked low), while its heap in use came back to within
60 KiB of where it started after every round.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from shellexec.app.admin_socket import get_json
from shellexec.app.envoy import render
from shellexec.app.settings import Settings
from shellexec.client._values import publish_request
from shellexec.rules import limits
from shellexec.vocabulary import EVENT_MESSAGE_ADDED, EVENT_MESSAGE_UPDATED

from support.acp import codex_delta, codex_start
from support.memory import rss_kib
from support.metrics import scrape, value
from support.stack import Stack, free_port

WATCHERS = 20
DELTA_BYTES = 4096
OUTPUT_BYTES = 30 * 1000 * 1000
# "A few MB": what 20 stalled watchers may add to the server's resident memory.
MAX_GROWTH_KIB = 4 * 1024
# What Envoy's heap in use may rise to while they stall: measured 1.4 to 11.5 MiB on the
# 2-core machine (70 to 575 KiB a watcher, freed as they are ended; ADR 0046). Its resident
# memory may grow as far: its allocator keeps what it grew to.
MAX_ENVOY_HEAP_PEAK_KIB = 16 * 1024
# What Envoy may still hold once the watchers are ended and their clients have gone.
MAX_ENVOY_HEAP_LEFT_KIB = 1024
STALLED_SECONDS = "2"
IN_FLIGHT = 16
PUBLISH = "/shellexec.v1.ShellExecService/PublishUpdate"
MESSAGE_EVENTS = (EVENT_MESSAGE_ADDED, EVENT_MESSAGE_UPDATED)


def publish_output(stack: Stack, session_id: str, call_id: str) -> None:
    """OUTPUT_BYTES of output for a new tool call, in DELTA_BYTES deltas, over gRPC."""
    chunk = "x" * (DELTA_BYTES - 1) + "\n"
    requests = [publish_request(session_id, codex_start(call_id, "cat big.log"), None)]
    requests += [publish_request(session_id, codex_delta(call_id, chunk), None)
                 for _ in range(OUTPUT_BYTES // DELTA_BYTES)]
    raw = [request.SerializeToString() for request in requests]

    async def run() -> None:
        async with grpc.aio.insecure_channel(stack.grpc_target) as channel:
            publish = channel.unary_unary(PUBLISH)
            await publish(raw[0], timeout=30)
            pending = iter(raw[1:])

            async def worker() -> None:
                for request in pending:
                    await publish(request, timeout=30)

            await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))

    asyncio.run(run())


def envoy_allocated_kib(stack: Stack) -> int:
    """The heap Envoy has in use now (not what its allocator holds), from its admin socket."""
    answer = get_json(stack.admin_socket, "/memory")
    assert answer is not None, "Envoy's admin socket did not answer"
    return int(answer["allocated"]) // 1024


def wait_until_envoy_frees(stack: Stack, bound_kib: int, timeout: float = 30.0) -> int:
    """Envoy's heap in use once it is at most `bound_kib`, or the last reading at the
    deadline (it frees a connection's buffers on its next event loop pass)."""
    deadline = time.monotonic() + timeout
    while (allocated := envoy_allocated_kib(stack)) > bound_kib and time.monotonic() < deadline:
        time.sleep(0.1)
    return allocated


@contextlib.contextmanager
def envoy_heap_peak(stack: Stack) -> Iterator[list[int]]:
    """Samples Envoy's heap in use until the block ends; yields a list that then holds the
    highest sample."""
    peak = [envoy_allocated_kib(stack)]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], envoy_allocated_kib(stack))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


def wait_until_ended(stack: Stack, timeout: float = 60.0) -> None:
    """Returns once the server has ended every watcher (stalled ones after
    STALLED_SECONDS without a write; any other at the stream lifetime, 30 s)."""
    deadline = time.monotonic() + timeout
    while value(scrape(stack), "shellexec_watchers") > 0:
        assert time.monotonic() < deadline, "the server still follows stalled watchers"
        time.sleep(0.1)


def open_stalled_watcher(stack: Stack, session_id: str) -> socket.socket:
    """An SSE feed request, from the session's latest revision on, from a client that never
    reads (a small receive buffer, so the kernel holds little for it either)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", stack.rest_port))
    sock.sendall(f"GET /api/v1/task-sessions/{session_id}/messages:watch "
                 f"HTTP/1.1\r\nHost: 127.0.0.1:{stack.rest_port}\r\n"
                 "Connection: close\r\n\r\n".encode())
    return sock


def read_to_end(sock: socket.socket, timeout: float = 60.0) -> bytes:
    """Everything the watcher was sent, once the other side closes the connection."""
    sock.settimeout(timeout)
    parts = []
    while chunk := sock.recv(1 << 16):
        parts.append(chunk)
    return b"".join(parts)


def sse_events(answer: bytes) -> list[dict[str, Any]]:
    """The complete events of a chunked SSE answer, which may stop anywhere."""
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    data = bytearray()
    while (end := body.find(b"\r\n")) > 0:
        size = int(body[:end], 16)
        if size == 0 or len(body) < end + 2 + size:
            break
        data += body[end + 2:end + 2 + size]
        body = body[end + 4 + size:]
    events = []
    for block in bytes(data).split(b"\n\n")[:-1]:  # the last block may be cut short
        line = block.decode().strip()
        assert line.startswith("data:"), line
        events.append(json.loads(line[len("data:"):]))
    return events


def revisions(events: list[dict[str, Any]]) -> tuple[int, list[int]]:
    """The revision the stream started after (its first heartbeat names it), and those of
    the message events it carried.

    Only message events count: a stream that reaches its lifetime before it stalls ends
    with `end_of_stream`, which repeats the revision of the last event sent (once in a few
    runs on a loaded machine, where publishing the output outlasts the lifetime)."""
    assert events, "no event at all"
    assert events[0]["type"] == "heartbeat", events[0]
    return (events[0]["revision"],
            [event["revision"] for event in events if event["type"] in MESSAGE_EVENTS])


@pytest.fixture
def stalling_stack(stack_with: Callable[..., Stack]) -> Stack:
    # The stacks' stream lifetime (30 s) stays: a stream whose every event still fit in the
    # kernel's and Envoy's buffers never has a write to time out, and is ended by it.
    # Small caches, full after the warm-up round: with the default ones (8 MiB of pages per
    # connection, 32 MiB of fold states) the server's resident memory grew 2 to 6 MB a round
    # as they filled, with stalled watchers or without, which this test would count as theirs.
    # The metrics port tells when the server has ended the watchers.
    return stack_with(SHELLEXEC_STALLED_WATCHER_SECONDS=STALLED_SECONDS,
                      SHELLEXEC_DB_CACHE_KIB="1024", SHELLEXEC_STATE_CACHE_MIB="4",
                      SHELLEXEC_METRICS_PORT=str(free_port()))


@pytest.mark.slow
# What stalled watchers cost is the feed hub's and Envoy's memory, the same whichever engine
# stores the events; the PostgreSQL feed path has its own tests (tests/feed, test_replicas).
# On SQLite only, it keeps a fresh-clone `make test` inside its time budget (90 s saved).
@pytest.mark.sqlite_only
def test_stalled_watchers_cost_bounded_memory_and_resume_by_revision(
        stalling_stack: Stack) -> None:
    stack = stalling_stack
    assert stack.server is not None
    assert stack.envoy is not None
    session_id = stack.api.new_session()["id"]
    with contextlib.ExitStack() as warming:
        for _ in range(WATCHERS):
            warming.enter_context(open_stalled_watcher(stack, session_id))
        publish_output(stack, session_id, "warm-up")
        wait_until_ended(stack)
    before = rss_kib(stack.server.pid), rss_kib(stack.envoy.pid)
    heap_before = envoy_allocated_kib(stack)

    with contextlib.ExitStack() as opened:
        watchers = [opened.enter_context(open_stalled_watcher(stack, session_id))
                    for _ in range(WATCHERS)]
        with envoy_heap_peak(stack) as heap_peak:
            publish_output(stack, session_id, "big")
            # What they hold once ended is what they cost: on a fast machine the round
            # can end before STALLED_SECONDS have passed since the first one stalled.
            wait_until_ended(stack)
        after = rss_kib(stack.server.pid), rss_kib(stack.envoy.pid)
        assert after[0] - before[0] <= MAX_GROWTH_KIB, f"server grew {after[0] - before[0]} KiB"
        assert after[1] - before[1] <= MAX_ENVOY_HEAP_PEAK_KIB, (
            f"envoy grew {after[1] - before[1]} KiB")
        assert heap_peak[0] - heap_before <= MAX_ENVOY_HEAP_PEAK_KIB, (
            f"envoy's heap peaked {heap_peak[0] - heap_before} KiB above where it was")

        latest = stack.api.session(session_id)["revision"]
        received = []
        for watcher in watchers:
            # Ended by the service, not by us: the answer stops before the session's end.
            start, got = revisions(sse_events(read_to_end(watcher)))
            assert got == list(range(start + 1, start + 1 + len(got)))
            assert got, "the watcher was sent nothing"
            assert got[-1] < latest
            received.append(got[-1])
    left = wait_until_envoy_frees(stack, heap_before + MAX_ENVOY_HEAP_LEFT_KIB)
    assert left - heap_before <= MAX_ENVOY_HEAP_LEFT_KIB, (
        f"envoy still holds {left - heap_before} KiB once the watchers are gone")
    last = min(received)
    resumed: list[int] = []
    for event in stack.api.watch(session_id, f"?since_revision={last}"):
        if event["type"] != "heartbeat":
            resumed.append(event["revision"])
        if resumed and resumed[-1] == latest:
            break
    assert resumed == list(range(last + 1, latest + 1))


def test_the_front_door_bounds_every_stream_buffer() -> None:
    """Envoy's defaults hold a whole stalled feed (a 256 MiB HTTP/2 stream window), so the
    rendered configuration must state the bound everywhere a stream is buffered."""
    config = render(Settings(), grpc_port=50051)
    bound = str(limits.FRONT_DOOR_STREAM_BUFFER_BYTES)
    assert re.findall(r"initial_stream_window_size: (\d+)", config) == [bound, bound]
    assert re.findall(r"per_connection_buffer_limit_bytes: (\d+)", config) == [bound]

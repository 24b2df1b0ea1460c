"""Two replicas on one PostgreSQL database (ADRs 0070, 0071), in one run:

- ingest throughput with 2 replicas against 1: the same 32 publishers (one session each,
  small deltas over gRPC) sending everything to replica A, then half to A and half to B, in
  alternating rounds (target: 2 replicas at least 0.9 times 1: no contention collapse), with
  the CPU per publish of the replicas and of PostgreSQL that explains it;
- cross-replica feed delivery: 64 watchers of one session on replica B and 64 on replica A
  (one caller's share per replica, ADR 0135; the runs in RESULTS.md before it had 200);
  updates published through A one at a time; the time from A's acknowledgement to each
  watcher's receipt, p50 and p99, on B against A (target: p99 on B at most 2 times A's).

The two cores are shared by the client, the replicas, Envoy and PostgreSQL: this shows cost
and the absence of collapse, not a scaling curve."""

from __future__ import annotations

import asyncio
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from _postgres import local_postgres, postgres_cpu_seconds

from shellexec.client._values import publish_request
from shellexec.client.aio import AsyncShellExecClient
from shellexec.rules.limits import MAX_WATCHERS_PER_CALLER

from _service import conclude, cpu_seconds
from support.cluster import running_cluster
from support.stack import Stack

PUBLISHERS = 32
PUBLISHES = 2_000
ROUNDS = 5
# With authentication off every client is the same caller, which holds at most this many
# feeds on each replica (ADR 0135).
WATCHERS = MAX_WATCHERS_PER_CALLER
EVENTS = 60
PUBLISH = "/shellexec.v1.ShellExecService/PublishUpdate"
THROUGHPUT_TARGET = 0.9
DELIVERY_TARGET = 2.0


def _delta(session_id: str, index: int) -> bytes:
    request: bytes = publish_request(session_id, {
        "sessionUpdate": "tool_call_update", "toolCallId": "call",
        "_meta": {"terminal_output_delta": {"data": f"line {index}\n"}}},
        None).SerializeToString()
    return request


async def _sessions(target: str) -> list[str]:
    async with AsyncShellExecClient(target) as client:
        sessions = [(await client.create_session("bench-replicas")).id
                    for _ in range(PUBLISHERS)]
        for session_id in sessions:
            await client.publish(session_id, {
                "sessionUpdate": "tool_call", "toolCallId": "call", "kind": "execute",
                "title": "build", "rawInput": {"command": "make"}})
    return sessions


async def _ingest(targets: list[str], sessions: list[str], offset: int) -> float:
    """Seconds for PUBLISHES publishes, the publishers spread over `targets`."""
    channels = [grpc.aio.insecure_channel(target) for target in targets]
    per_publisher = PUBLISHES // PUBLISHERS
    try:
        calls = [channel.unary_unary(PUBLISH) for channel in channels]

        async def publisher(index: int) -> None:
            publish = calls[index % len(calls)]
            for step in range(per_publisher):
                await publish(_delta(sessions[index], offset + step))

        start = time.perf_counter()
        await asyncio.gather(*(publisher(index) for index in range(PUBLISHERS)))
        return time.perf_counter() - start
    finally:
        for channel in channels:
            await channel.close()


def _throughput(replicas: list[Stack], postgres_cpu: Callable[[], float]) -> dict[str, float]:
    targets = [replica.grpc_target for replica in replicas]
    sessions = asyncio.run(_sessions(targets[0]))
    offsets = itertools.count(0, PUBLISHES)
    rates: dict[int, list[float]] = {1: [], 2: []}
    cpu: dict[int, list[float]] = {1: [], 2: []}
    database_cpu: dict[int, list[float]] = {1: [], 2: []}
    for round_index in range(ROUNDS + 1):  # the first round warms up and is not counted
        for count in (1, 2):
            pids = [replica.server.pid for replica in replicas if replica.server is not None]
            before = sum(cpu_seconds(pid) for pid in pids)
            db_before = postgres_cpu()
            seconds = asyncio.run(_ingest(targets[:count], sessions, next(offsets)))
            if round_index == 0:
                continue
            rates[count].append(PUBLISHES / seconds)
            cpu[count].append((sum(cpu_seconds(pid) for pid in pids) - before) / PUBLISHES)
            database_cpu[count].append((postgres_cpu() - db_before) / PUBLISHES)
    return {"one_per_s": statistics.median(rates[1]), "two_per_s": statistics.median(rates[2]),
            "one_cpu_us": statistics.median(cpu[1]) * 1e6,
            "two_cpu_us": statistics.median(cpu[2]) * 1e6,
            "one_pg_cpu_us": statistics.median(database_cpu[1]) * 1e6,
            "two_pg_cpu_us": statistics.median(database_cpu[2]) * 1e6}


async def _delivery(a: str, b: str) -> tuple[list[float], list[float]]:
    """Seconds from A's acknowledgement to each watcher's receipt: (on A, on B)."""
    async with AsyncShellExecClient(a) as on_a, AsyncShellExecClient(b) as on_b:
        session_id = (await on_a.create_session("bench-feed")).id
        acknowledged: dict[int, float] = {}
        received: dict[str, list[tuple[int, float]]] = {"a": [], "b": []}
        ready = 0

        async def watch(client: AsyncShellExecClient, side: str) -> None:
            nonlocal ready
            feed = client.watch(session_id, since_revision=0)
            async for event in feed:
                if event.type == "heartbeat" and event.revision == 0:
                    ready += 1
                    continue
                if event.revision > 0 and event.type != "heartbeat":
                    received[side].append((event.revision, time.perf_counter()))
                    if event.revision >= EVENTS:
                        break
            await feed.aclose()

        watchers = [asyncio.create_task(watch(client, side)) for client, side in
                    ((on_a, "a"), (on_b, "b")) for _ in range(WATCHERS)]
        while ready < 2 * WATCHERS:
            await asyncio.sleep(0.05)
        for index in range(EVENTS):
            await on_a.publish(session_id, {"sessionUpdate": "agent_message_chunk",
                                            "content": {"type": "text", "text": f"{index} "}})
            acknowledged[index + 1] = time.perf_counter()
            # One at a time, slower than the client takes in 128 copies of an event: this
            # measures delivery, not a client that fell behind.
            await asyncio.sleep(0.1)
        await asyncio.wait_for(asyncio.gather(*watchers), 120)
    return ([at - acknowledged[revision] for revision, at in received["a"]],
            [at - acknowledged[revision] for revision, at in received["b"]])


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    with (local_postgres() as postgres, tempfile.TemporaryDirectory() as folder,
          running_cluster(Path(folder), postgres.url(), {"SHELLEXEC_LOG": "errors"})
          as cluster):
        figures = _throughput(cluster.replicas, lambda: postgres_cpu_seconds(postgres))
        a, b = (replica.grpc_target for replica in cluster.replicas)
        same, cross = asyncio.run(_delivery(a, b))
    ratio = figures["two_per_s"] / figures["one_per_s"]
    conclude("replica ingest (2 replicas vs 1 on one PostgreSQL, 32 publishers)",
             f"1 replica {figures['one_per_s']:.0f}/s ({figures['one_cpu_us']:.0f} us CPU + "
             f"{figures['one_pg_cpu_us']:.0f} us PostgreSQL per publish), 2 replicas "
             f"{figures['two_per_s']:.0f}/s ({figures['two_cpu_us']:.0f} us + "
             f"{figures['two_pg_cpu_us']:.0f} us)", figures, ratio,
             f">= {THROUGHPUT_TARGET}", ratio >= THROUGHPUT_TARGET)
    delivery = {"same_p50_ms": _quantile(same, 0.5) * 1e3,
                "same_p99_ms": _quantile(same, 0.99) * 1e3,
                "cross_p50_ms": _quantile(cross, 0.5) * 1e3,
                "cross_p99_ms": _quantile(cross, 0.99) * 1e3}
    delivery_ratio = delivery["cross_p99_ms"] / delivery["same_p99_ms"]
    conclude(f"cross-replica feed ({WATCHERS} watchers on B vs {WATCHERS} on A, publish on A)",
             f"ack to receipt: same replica p50 {delivery['same_p50_ms']:.1f} ms p99 "
             f"{delivery['same_p99_ms']:.1f} ms; other replica p50 "
             f"{delivery['cross_p50_ms']:.1f} ms p99 {delivery['cross_p99_ms']:.1f} ms",
             delivery, delivery_ratio, f"<= {DELIVERY_TARGET}", delivery_ratio <= DELIVERY_TARGET)


if __name__ == "__main__":
    main()

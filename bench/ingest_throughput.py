"""Ingest throughput of small updates through gRPC vs a raw grpc.aio echo RPC on the same
server (target: at least 0.5). Both driven by one asyncio client with 32 calls in flight.

The client sends pre-serialized requests and does not decode responses in both cases, so the
client's own cost is the same and the ratio measures the server: a publish (decode, fold,
durable commit, projected response) against a bare echo. The echo is raw bytes in and out, but
it passes the server's interceptors (metrics, call log, authentication) as every call does, so
what is compared is the work a publish adds to any call (ADR 0117).

Beside the rates it prints the event loop's CPU per call (the server's main thread, from
/proc) for both calls, and their ratio: the measure ADR 0117 proposed as a restated target.
It tracks the rates' ratio and moves with the machine as much (ADR 0117, "Measured since")."""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from dataclasses import dataclass

import grpc

from shellexec.client._values import publish_request

from _service import conclude, cpu_seconds, running_stack

IN_FLIGHT = 32
PREBUILT = 40_000
SECONDS = 1.5
ROUNDS = 9
WARM_UP_SECONDS = 1.0
TARGET = 0.5
ECHO = "/shellexec.bench.Echo/Echo"
PUBLISH = "/shellexec.v1.ShellExecService/PublishUpdate"


@dataclass(frozen=True)
class _Figures:
    """Calls per second, and the event loop thread's CPU per call in microseconds: of one
    round, or the medians of several."""

    rate: float
    loop_cpu_us: float


def _medians(rounds: list[_Figures]) -> _Figures:
    return _Figures(statistics.median(r.rate for r in rounds),
                    statistics.median(r.loop_cpu_us for r in rounds))


async def _measured(call: object, server_pid: int) -> _Figures:
    before = cpu_seconds(server_pid, thread=server_pid)
    rate = await _rate(call)
    spent = cpu_seconds(server_pid, thread=server_pid) - before
    return _Figures(rate, spent * 1e6 / (rate * SECONDS))


async def _rate(call: object, seconds: float = SECONDS) -> float:
    deadline = time.perf_counter() + seconds
    done = 0

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()  # type: ignore[operator]
            done += 1

    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    return done / seconds


async def _measure(target: str, session_id: str, server_pid: int) -> tuple[_Figures, _Figures]:
    async with grpc.aio.insecure_channel(target) as channel:
        echo = channel.unary_unary(ECHO)
        publish = channel.unary_unary(PUBLISH)
        calls = [f"call-{index}" for index in range(64)]
        deltas = [publish_request(session_id, {
            "sessionUpdate": "tool_call_update", "toolCallId": calls[index % len(calls)],
            "_meta": {"terminal_output_delta": {"data": f"line {index}\n"}}},
            None).SerializeToString() for index in range(PREBUILT)]
        echo_bytes = deltas[0]
        counter = itertools.count()

        async def one_echo() -> None:
            await echo(echo_bytes)

        async def one_publish() -> None:
            await publish(deltas[next(counter) % PREBUILT])

        for call_id in calls:
            await publish(publish_request(session_id, {
                "sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "execute",
                "title": "build", "rawInput": {"command": "make"}}, None).SerializeToString())
        # Warm both paths (connections, caches, the database file) before measuring.
        await _rate(one_echo, WARM_UP_SECONDS)
        await _rate(one_publish, WARM_UP_SECONDS)
        echoes, publishes = [], []
        for _ in range(ROUNDS):  # alternating, so both see the same machine noise
            echoes.append(await _measured(one_echo, server_pid))
            publishes.append(await _measured(one_publish, server_pid))
        return _medians(echoes), _medians(publishes)


def main() -> None:
    with running_stack(SHELLEXEC_BENCH_ECHO="1") as stack, stack.client() as client:
        session_id = client.create_session("bench-ingest").id
        assert stack.server is not None
        echo, publish = asyncio.run(_measure(stack.grpc_target, session_id, stack.server.pid))
    ratio = publish.rate / echo.rate
    loop_cpu_ratio = echo.loop_cpu_us / publish.loop_cpu_us
    conclude("ingest throughput (publish vs raw echo, gRPC, 32 in flight)",
             f"small updates: echo {echo.rate:.0f}/s, publish {publish.rate:.0f}/s; "
             f"loop CPU per call: echo {echo.loop_cpu_us:.0f} us, "
             f"publish {publish.loop_cpu_us:.0f} us (ratio {loop_cpu_ratio:.2f})",
             {"echo_per_s": echo.rate, "publish_per_s": publish.rate,
              "echo_loop_cpu_us": echo.loop_cpu_us, "publish_loop_cpu_us": publish.loop_cpu_us,
              "loop_cpu_ratio": loop_cpu_ratio}, ratio, f">= {TARGET}", ratio >= TARGET)


if __name__ == "__main__":
    main()

"""What the service benchmarks share: a real stack in a temporary directory and timing helpers.

Benchmarks interleave the baseline and the measured case in rounds and report medians, because
these 2-core machines are shared and noisy: only ratios measured in the same run mean anything.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc

from results import record
from support import stack as stacks
from support.stack import Stack

TICKS = os.sysconf("SC_CLK_TCK")


@contextmanager
def running_stack(**settings: str) -> Iterator[Stack]:
    """A started stack in a temporary directory, with extra settings."""
    with (tempfile.TemporaryDirectory(prefix="shellexec-bench-") as workdir,
          stacks.running_stack(Path(workdir), **settings) as stack):
        yield stack


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU seconds of process `pid` so far, or of its thread `thread` alone
    (the process's own id names its main thread)."""
    stat = Path(f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def p99_seconds(call: grpc.UnaryUnaryMultiCallable, request: bytes, seconds: float,
                timeout: float) -> float:
    """The p99 latency of `call(request)`, made one after another for `seconds`."""
    latencies = []
    deadline = time.perf_counter() + seconds
    while (start := time.perf_counter()) < deadline:
        call(request, timeout=timeout)
        latencies.append(time.perf_counter() - start)
    return statistics.quantiles(latencies, n=100)[98]


def seconds_per_call(call: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def interleaved_medians(baseline: Callable[[], float], measured: Callable[[], float],
                        rounds: int) -> tuple[float, float]:
    """Runs both `rounds` times, alternating, and returns their medians."""
    base, other = [], []
    for _ in range(rounds):
        base.append(baseline())
        other.append(measured())
    return statistics.median(base), statistics.median(other)


def conclude(benchmark: str, summary: str, figures: dict[str, float], ratio: float,
             target: str, met: bool) -> None:
    """Prints the outcome line and records it in bench/RESULTS.md."""
    print(f"{summary}, ratio {ratio:.2f} (target {target}) {'MET' if met else 'NOT MET'}")
    record(benchmark, {**figures, "ratio": ratio}, f"ratio {target}", met)

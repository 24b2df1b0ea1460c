"""Shared by the benchmarks: timing a call, and recording figures in bench/RESULTS.md."""

from __future__ import annotations

import datetime
import os
import platform
import timeit
from collections.abc import Callable
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = (
    "# Benchmark results\n\n"
    "Appended by `make bench` (each script in `bench/`). Figures are seconds unless the name\n"
    "says otherwise; ratios compare against a baseline measured in the same run.\n\n"
    "| date (UTC) | machine | CPUs | benchmark | figures | target | met |\n"
    "| --- | --- | --- | --- | --- | --- | --- |\n"
)


def per_call_seconds(fn: Callable[[], object], repeat: int, number: int) -> float:
    """Seconds per call of `fn`: the best of `repeat` runs of `number` calls (like timeit)."""
    runs = timeit.repeat(fn, repeat=repeat, number=number)
    return min(runs) / number


def record(benchmark: str, figures: dict[str, float], target: str, met: bool) -> None:
    """Appends one row to bench/RESULTS.md (created with its header when missing)."""
    if not RESULTS.exists():
        RESULTS.write_text(HEADER, encoding="utf-8")
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
    shown = ", ".join(f"{name} {value:.4g}" for name, value in figures.items())
    row = (
        f"| {now} | {platform.node()} | {os.cpu_count()} | {benchmark} | {shown} | {target} "
        f"| {'yes' if met else 'NO'} |\n"
    )
    with RESULTS.open("a", encoding="utf-8") as results:
        results.write(row)

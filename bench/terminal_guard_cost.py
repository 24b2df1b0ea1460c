"""What a hosted terminal's guard costs (ADR 0136): the time from start to end of `true` under
the guard against the same command through the agent's launcher, which execs it directly, and
the memory one guard holds while its command runs (targets: at most 2x the launcher's time,
at most 8 MiB of proportional set size per guard, so 64 terminals stay near half a GiB).

Both ways run alternately in the same loop, so both see the same machine noise; each figure
is the median of its runs. The memory is read from `/proc/<guard>/smaps_rollup` while the
guard waits on a `sleep`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import time
from pathlib import Path

from shellexec.bridge.guarded_command import GuardedCommand
from shellexec.bridge.process_guard import ending_with_bridge

from results import record

RUNS = 40
TIME_TARGET = 2.0
PSS_TARGET_MIB = 8.0
SHELL = shutil.which("bash") or "/bin/sh"


async def _launched_true() -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *ending_with_bridge(SHELL, [SHELL, "-c", "true"]), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True)
    await process.communicate()
    return time.perf_counter() - start


async def _guarded_true() -> float:
    start = time.perf_counter()
    command = await GuardedCommand.start(SHELL, "true", Path.cwd(), os.environ)
    await command.stdout.read()
    await command.shell_exit()
    await command.ended()
    elapsed = time.perf_counter() - start
    command.abandon()  # reaps the guard, as releasing its terminal does
    return elapsed


def _rollup_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value, *_ = line.split()
        fields[name.rstrip(":")] = int(value)
    return fields


async def _guard_memory_kib() -> dict[str, int]:
    command = await GuardedCommand.start(SHELL, "sleep 30", Path.cwd(), os.environ)
    try:
        await asyncio.sleep(0.5)  # past its start-up, waiting as it does for a long command
        return _rollup_kib(command.guard.pid)
    finally:
        command.end()
        await command.ended()
        command.abandon()


async def measure() -> dict[str, float]:
    launched, guarded = [], []
    for _ in range(RUNS):
        launched.append(await _launched_true())
        guarded.append(await _guarded_true())
    memory = await _guard_memory_kib()
    launcher_ms = statistics.median(launched) * 1000
    guard_ms = statistics.median(guarded) * 1000
    return {"launcher_ms": launcher_ms, "guard_ms": guard_ms, "ratio": guard_ms / launcher_ms,
            "guard_pss_mib": memory["Pss"] / 1024, "guard_rss_mib": memory["Rss"] / 1024}


def main() -> None:
    figures = asyncio.run(measure())
    met = figures["ratio"] <= TIME_TARGET and figures["guard_pss_mib"] <= PSS_TARGET_MIB
    target = f"ratio <= {TIME_TARGET:g}, PSS <= {PSS_TARGET_MIB:g} MiB"
    shown = ", ".join(f"{name} {value:.3g}" for name, value in figures.items())
    print(f"{shown} (target {target}) {'MET' if met else 'NOT MET'}")
    record("terminal guard cost (start to end of `true` vs the launcher; one guard's PSS)",
           figures, target, met)


if __name__ == "__main__":
    main()

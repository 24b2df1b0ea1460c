"""Memory bound: the server's resident memory stays under 150 MB through a long workload.

The workload, through gRPC on the real server with its default cache settings: 200 sessions,
each with one command streaming 256 KiB of output in 8 KiB deltas (all commands at once,
round-robin, so every cache is asked for more than it holds), 20 watchers following 20 of
the sessions live, then every session's shell output read back and its messages listed.
Figures are the server's VmRSS at the end and its peak (VmHWM, /proc/PID/status) in MB.
About a minute on a 2-core machine.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from shellexec.client import AsyncShellExecClient

from _service import running_stack
from results import record

KIB = 1024
SESSIONS = 200
OUTPUT_BYTES = 256 * KIB
DELTA_BYTES = 8 * KIB
WATCHERS = 20
IN_FLIGHT = 16
TARGET_MB = 150.0


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024  # kB
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


async def _watch(client: AsyncShellExecClient, session_id: str, seen: list[int]) -> None:
    async for _ in client.watch(session_id):
        seen[0] += 1


async def _stream_all(client: AsyncShellExecClient, session_ids: list[str]) -> None:
    """Every session's command receives its deltas in turn, IN_FLIGHT publishes at a time."""
    line = "y" * (DELTA_BYTES - 1) + "\n"
    work = iter([(session_id, step) for step in range(OUTPUT_BYTES // DELTA_BYTES)
                 for session_id in session_ids])
    sequences = {session_id: itertools.count(2) for session_id in session_ids}

    async def worker() -> None:
        for session_id, _ in work:
            await client.publish(session_id, {
                "sessionUpdate": "tool_call_update", "toolCallId": "run",
                "_meta": {"terminal_output_delta": {"data": line}}},
                next(sequences[session_id]))

    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))


async def _workload(target: str) -> int:
    async with AsyncShellExecClient(target) as client:
        session_ids = [(await client.create_session(f"bench-memory-{index}", "codex")).id
                       for index in range(SESSIONS)]
        for session_id in session_ids:
            await client.publish(session_id, {
                "sessionUpdate": "tool_call", "toolCallId": "run", "kind": "execute",
                "status": "in_progress", "title": "tail -f build.log",
                "rawInput": {"command": "tail -f build.log"}}, 1)
        seen = [0]
        watchers = [asyncio.create_task(_watch(client, session_id, seen))
                    for session_id in session_ids[:WATCHERS]]
        await _stream_all(client, session_ids)
        for session_id in session_ids:
            messages = await client.messages(session_id)
            await client.shell_output(session_id, messages[0].id)
        for watcher in watchers:
            watcher.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        return seen[0]


def main() -> None:
    with running_stack() as stack:
        assert stack.server is not None
        pid = stack.server.pid
        start_mb = _status_mb(pid, "VmRSS")
        delivered = asyncio.run(_workload(stack.grpc_target))
        end_mb, peak_mb = _status_mb(pid, "VmRSS"), _status_mb(pid, "VmHWM")
    met = peak_mb <= TARGET_MB
    print(f"{SESSIONS} sessions x {OUTPUT_BYTES // KIB} KiB, {WATCHERS} watchers "
          f"({delivered} events delivered): RSS {start_mb:.0f} MB at start, {end_mb:.0f} MB "
          f"at end, peak {peak_mb:.0f} MB (target <= {TARGET_MB:.0f}) "
          f"{'MET' if met else 'NOT MET'}")
    record("memory bound (200 sessions x 256 KiB, 20 watchers; VmHWM)",
           {"start_rss_mb": start_mb, "end_rss_mb": end_mb, "peak_rss_mb": peak_mb},
           f"peak <= {TARGET_MB:.0f} MB", met)


if __name__ == "__main__":
    main()

"""A quiet caller's publishes while another token floods costly chat chunks (target: the quiet
caller keeps at least half its idle publish rate), ADR 0148.

The flooding token's 16 workers (two processes of eight threads) append 8-byte chunks to a chat
message of 256 KiB of coloured `TOKEN=` lines: each chunk masks the whole message again, about
150 ms of the event loop on these machines. Before pacing, such a flood raised every other
caller's p99 from about 20 ms to 2.5 s. Pacing gives a caller's costly publishes about a
quarter of the writer once their burst is spent, so the quiet caller, one bridge streaming a
command's output with a token of its own, should keep most of its rate.

Idle and flooded phases alternate, so both see the same machine noise, and the flood runs
throughout the flooded phases (its debt past the burst). Each figure is the median over the
rounds. The p99s are printed too: a quiet publish that lands behind one costly unit waits for
it, so the flooded p99 is about one unit's time, which pacing does not shorten (ADR 0148).
"""

from __future__ import annotations

import multiprocessing
import statistics
import threading
import time
from multiprocessing.synchronize import Event

from shellexec.client import ShellExecClient
from shellexec.rules.limits import MAX_STORED_TEXT_BYTES

from _service import conclude, running_stack
from support.acp import agent_text, codex_delta, codex_start

FLOOD_PROCESSES = 2
FLOOD_THREADS = 8
PHASE_SECONDS = 4.0
ROUNDS = 3
TARGET = 0.5
COSTLY_TEXT = ("\x1b[32mTOKEN\x1b[0m=abc\x1b[0m\n" * 20_000)[:MAX_STORED_TEXT_BYTES - 4096]


def _flood(target: str, token: str, session_id: str, stop: Event) -> None:
    def worker() -> None:
        with ShellExecClient(target, timeout=120, token=token) as client:
            while not stop.is_set():
                client.publish(session_id, agent_text(" chunk"))

    threads = [threading.Thread(target=worker) for _ in range(FLOOD_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _quiet_phase(client: ShellExecClient, session_id: str, call: str) -> list[float]:
    """The latencies of one-line deltas published one after another for PHASE_SECONDS."""
    latencies = []
    deadline = time.perf_counter() + PHASE_SECONDS
    while (start := time.perf_counter()) < deadline:
        client.publish(session_id, codex_delta(call, "compiled one more module\n"))
        latencies.append(time.perf_counter() - start)
    return latencies


def main() -> None:
    with running_stack(SHELLEXEC_AUTH="on") as stack:
        quiet_token = stack.create_token("bench-quiet", "ingest")
        costly_token = stack.create_token("bench-costly", "ingest")
        with ShellExecClient(stack.grpc_target, token=costly_token) as costly:
            chat = costly.create_session("bench-pacing-chat").id
            costly.start_turn(chat)
            costly.publish(chat, agent_text(COSTLY_TEXT))
        with ShellExecClient(stack.grpc_target, token=quiet_token) as quiet:
            session_id = quiet.create_session("bench-pacing-quiet").id
            quiet.start_turn(session_id)
            quiet.publish(session_id, codex_start("build", "make -j2"))
            _quiet_phase(quiet, session_id, "build")  # warm up
            context = multiprocessing.get_context("spawn")
            idle, flooded = [], []
            for _ in range(ROUNDS):
                idle.append(_quiet_phase(quiet, session_id, "build"))
                stop = context.Event()
                flooders = [context.Process(target=_flood,
                                            args=(stack.grpc_target, costly_token, chat, stop))
                            for _ in range(FLOOD_PROCESSES)]
                for process in flooders:
                    process.start()
                time.sleep(2.0)  # the flood under way and its burst spent
                flooded.append(_quiet_phase(quiet, session_id, "build"))
                stop.set()
                for process in flooders:
                    process.join(timeout=180)
    idle_rate = statistics.median(len(phase) / PHASE_SECONDS for phase in idle)
    flooded_rate = statistics.median(len(phase) / PHASE_SECONDS for phase in flooded)
    idle_p99 = statistics.median(_p99(phase) for phase in idle)
    flooded_p99 = statistics.median(_p99(phase) for phase in flooded)
    ratio = flooded_rate / idle_rate
    conclude("publish pacing (a quiet token's publishes while another floods costly chunks)",
             f"quiet publishes per second idle {idle_rate:.0f}, flooded {flooded_rate:.0f}; "
             f"p99 {idle_p99 * 1e3:.1f} ms -> {flooded_p99 * 1e3:.1f} ms",
             {"idle_per_s": idle_rate, "flooded_per_s": flooded_rate,
              "idle_p99_ms": idle_p99 * 1e3, "flooded_p99_ms": flooded_p99 * 1e3},
             ratio, f">= {TARGET:g}", ratio >= TARGET)


def _p99(latencies: list[float]) -> float:
    return statistics.quantiles(latencies, n=100)[98]


if __name__ == "__main__":
    main()

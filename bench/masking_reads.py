"""What re-reading pages of the costliest text to mask costs other callers, next to
re-reading pages of plain text of the same size (target: GetSession's p99 under the costly
reads at most 1.5x its p99 under the plain ones; ADR 0147).

Two sessions hold eight tool calls each whose command, title and directory are 256 KiB: of
coloured `TOKEN=abc` lines in one, the family that costs the masker most per line, and of
plain log lines in the other (about 6 MB of text a page). Six client processes list one
session's messages in a loop while this process times GetSession on one connection; idle,
plain and costly phases alternate, so all see the same machine noise, and each figure is the
median of its phases' p99. Before the server kept costly masked texts, every read masked the
whole page again (1 s of reader-thread CPU), and GetSession's p99 under the costly reads was
14 times its p99 under the plain ones. What plain pages cost other callers (reading and
sending 6 MB a call) is informative, not the target.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from multiprocessing.synchronize import Event

import grpc

from shellexec.client import ShellExecClient
from shellexec.v1 import shell_exec_service_pb2 as pb

from _service import conclude, p99_seconds, running_stack

READERS = 6
CALLS = 8
PHASE_SECONDS = 3.0
ROUNDS = 3
CALL_TIMEOUT = 30
TARGET = 1.5
LIST_MESSAGES = "/shellexec.v1.ShellExecService/ListMessages"
GET_SESSION = "/shellexec.v1.ShellExecService/GetSession"
TEXT_CHARS = 256 * 1024
COSTLY_LINE = "TOKEN=abc\x1b[0m\n"
PLAIN_LINE = "compiling module 42 of 99 ok\n"


def _read(target: str, raw: bytes, stop: Event) -> None:
    with grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", -1)]
                               ) as channel:
        list_messages = channel.unary_unary(LIST_MESSAGES)
        while not stop.is_set():
            list_messages(raw, timeout=60)


def _seeded_session(client: ShellExecClient, line: str) -> str:
    """A session of CALLS tool calls whose texts are `line` repeated (8 x 3 x 256 KiB)."""
    text = line * (TEXT_CHARS // len(line))
    session_id: str = client.create_session("bench-masking-reads").id
    for n in range(CALLS):
        client.publish(session_id, {
            "sessionUpdate": "tool_call", "toolCallId": f"call-{n}", "kind": "execute",
            "status": "in_progress", "title": text, "rawInput": {"command": text, "cwd": text}})
    return session_id


def _p99_while_reading(get: grpc.UnaryUnaryMultiCallable, request: bytes, target: str,
                       listing: bytes) -> float:
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    readers = [context.Process(target=_read, args=(target, listing, stop))
               for _ in range(READERS)]
    for process in readers:
        process.start()
    time.sleep(1.0)  # the reads under way (processes started, calls in flight)
    p99 = p99_seconds(get, request, PHASE_SECONDS, CALL_TIMEOUT)
    stop.set()
    for process in readers:
        process.join(timeout=60)
    return p99


def measure() -> tuple[float, float, float]:
    """GetSession's p99 idle, under plain reads and under costly reads: medians over the
    rounds."""
    with running_stack() as stack:
        with stack.client() as client:
            plain, costly = (_seeded_session(client, line) for line in (PLAIN_LINE, COSTLY_LINE))
        listings = [pb.ListMessagesRequest(session_id=session_id, limit=CALLS).SerializeToString()
                    for session_id in (plain, costly)]
        with grpc.insecure_channel(stack.grpc_target,
                                   options=[("grpc.max_receive_message_length", -1)]) as channel:
            get = channel.unary_unary(GET_SESSION)
            request = pb.GetSessionRequest(session_id=plain).SerializeToString()
            p99_seconds(get, request, 1.0, CALL_TIMEOUT)  # warm up
            idle, under_plain, under_costly = [], [], []
            for _ in range(ROUNDS):
                idle.append(p99_seconds(get, request, PHASE_SECONDS, CALL_TIMEOUT))
                under_plain.append(_p99_while_reading(get, request, stack.grpc_target,
                                                      listings[0]))
                under_costly.append(_p99_while_reading(get, request, stack.grpc_target,
                                                       listings[1]))
        return (statistics.median(idle), statistics.median(under_plain),
                statistics.median(under_costly))


def main() -> None:
    idle, under_plain, under_costly = measure()
    ratio = under_costly / under_plain
    met = ratio <= TARGET
    conclude(f"masking reads (GetSession p99, {READERS} clients re-reading pages of costly vs "
             "plain text)",
             f"GetSession p99 idle {idle * 1e3:.2f} ms, under plain reads "
             f"{under_plain * 1e3:.2f} ms, under costly reads {under_costly * 1e3:.2f} ms",
             {"idle_p99_ms": idle * 1e3, "plain_p99_ms": under_plain * 1e3,
              "costly_p99_ms": under_costly * 1e3}, ratio, f"<= {TARGET:g}", met)


if __name__ == "__main__":
    main()

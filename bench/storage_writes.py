"""Storage writes: how many bytes the server makes the disk write for what agents print.

Two workloads through gRPC on the real server, each on a fresh database:

- streaming: one command receiving 5,000 deltas of 4 KiB (its stored body stays at its
  bound): bytes written per publish (target <= 24 KiB) and the database's net growth per
  publish beyond the stored body (target <= 100 bytes);
- commands: 1,000 commands of 10 KiB output each (a `tool_call`, then one update with the
  output and the exit): bytes written per output byte (target <= 4; WAL mode writes every
  page twice, so about 2 is the floor for output stored as it came).

The output is real shell output: slices of `fixtures/shell_output.txt`, what six commands an
agent runs in a repository printed (`pytest -v`, `git log --stat`, `ls -la`, `grep -rn`,
`git show`, `cat` of a source file), captured once in this repository. The store deflates
output (ADR 0150), so the data decides the figures: a repeated character, as this benchmark
sent before, would deflate to almost nothing and measure nothing. Each command gets another
slice. The commands workload runs a second time with random printable text, which deflate
barely shrinks (it keeps about 83 %): that figure is printed and recorded beside the others,
with no target of its own (ADR 0150).

Bytes written are the server process's own `write_bytes` (/proc/PID/io: what it caused to be
written to disk, WAL included) plus the final `PRAGMA wal_checkpoint(TRUNCATE)`, which this
process runs and counts the same way, so that pages still only in the WAL count as written
twice. Every publish carries a `sequence`, as the bridge's do. Byte counts, not times: the
shared machine's noise barely moves them.
"""

from __future__ import annotations

import itertools
import random
import sqlite3
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from shellexec.client import ShellExecClient

from _service import running_stack
from results import record

KIB = 1024
DELTAS = 5_000
DELTA_BYTES = 4 * KIB
COMMANDS = 1_000
COMMAND_BYTES = 10 * KIB
MAX_WRITTEN_PER_PUBLISH = 24 * KIB
MAX_GROWTH_PER_PUBLISH = 100
MAX_WRITTEN_PER_OUTPUT_BYTE = 4.0
CORPUS = (Path(__file__).resolve().parent / "fixtures" / "shell_output.txt").read_text(
    encoding="utf-8")
# Each slice starts this many characters after the last (a prime: slices rarely repeat).
STRIDE = 7919


def _write_bytes(pid: int | str) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    raise RuntimeError(f"no write_bytes in /proc/{pid}/io")


@dataclass(frozen=True)
class Footprint:
    """The database after a checkpoint: its used bytes and the output bytes it stores."""

    used_bytes: int
    body_bytes: int


def _checkpoint(path: Path) -> tuple[int, Footprint]:
    """Checkpoints the WAL into the database; returns the bytes that wrote and what the
    database then holds."""
    before = _write_bytes("self")
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        written = _write_bytes("self") - before
        page_size, pages, free = (connection.execute(f"PRAGMA {name}").fetchone()[0]
                                  for name in ("page_size", "page_count", "freelist_count"))
        body = connection.execute(
            "SELECT COALESCE(SUM(LENGTH(CAST(data AS BLOB)) + COALESCE(LENGTH(packed), 0)), 0) "
            "FROM output_chunk").fetchone()[0]
    connection.close()
    return written, Footprint((pages - free) * page_size, int(body))


Outputs = Iterator[str]


def _measured(workload: Callable[[ShellExecClient, str], None]) -> tuple[int, int]:
    """(bytes written, net growth beyond the stored body) of `workload` on a fresh stack."""
    with running_stack() as stack, stack.client() as client:
        assert stack.server is not None
        path = stack.workdir / "shellexec.db"
        session_id = client.create_session("bench-storage").id
        _, start = _checkpoint(path)
        server_before = _write_bytes(stack.server.pid)
        workload(client, session_id)
        server_written = _write_bytes(stack.server.pid) - server_before
        checkpoint_written, end = _checkpoint(path)
    growth = (end.used_bytes - start.used_bytes) - (end.body_bytes - start.body_bytes)
    return server_written + checkpoint_written, growth


def shell_outputs(size: int) -> Outputs:
    """Slices of `size` characters of the corpus, each starting `STRIDE` after the last."""
    for index in itertools.count():
        start = index * STRIDE % (len(CORPUS) - size)
        yield CORPUS[start:start + size]


def random_outputs(size: int) -> Outputs:
    """Random printable text, `size` characters each (the same in every run)."""
    chooser = random.Random(12)
    printable = string.digits + string.ascii_letters + string.punctuation + " "
    while True:
        yield "".join(chooser.choices(printable, k=size - 1)) + "\n"


def _start(call_id: str) -> dict[str, object]:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "execute",
            "status": "in_progress", "title": "make test",
            "rawInput": {"command": "make test"}}


def _delta(call_id: str, text: str) -> dict[str, object]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "_meta": {"terminal_output_delta": {"data": text}}}


def _streaming(client: ShellExecClient, session_id: str) -> None:
    client.publish(session_id, _start("stream"), 1)
    outputs = shell_outputs(DELTA_BYTES)
    for sequence in range(2, DELTAS + 2):
        client.publish(session_id, _delta("stream", next(outputs)), sequence)


def _commands(outputs: Outputs, printed: list[int]) -> Callable[[ShellExecClient, str], None]:
    """The commands workload with these outputs; adds the bytes it printed to `printed`."""
    def run(client: ShellExecClient, session_id: str) -> None:
        for index in range(COMMANDS):
            call_id = f"call-{index}"
            client.publish(session_id, _start(call_id), 2 * index + 1)
            output = next(outputs)
            printed.append(len(output.encode("utf-8")))
            finished = _delta(call_id, output)
            finished["status"] = "completed"
            finished["_meta"] = {**finished["_meta"],  # type: ignore[dict-item]
                                 "terminal_exit": {"exit_code": 0, "signal": None}}
            client.publish(session_id, finished, 2 * index + 2)

    return run


def _per_output_byte(outputs: Outputs) -> float:
    printed: list[int] = []
    written, _ = _measured(_commands(outputs, printed))
    return written / sum(printed)


def main() -> None:
    streamed, growth = _measured(_streaming)
    per_publish, growth_per_publish = streamed / DELTAS, growth / DELTAS
    per_output_byte = _per_output_byte(shell_outputs(COMMAND_BYTES))
    random_per_output_byte = _per_output_byte(random_outputs(COMMAND_BYTES))
    met = (per_publish <= MAX_WRITTEN_PER_PUBLISH and growth_per_publish
           <= MAX_GROWTH_PER_PUBLISH and per_output_byte <= MAX_WRITTEN_PER_OUTPUT_BYTE)
    print(f"streaming {DELTAS} x 4 KiB deltas: {per_publish / KIB:.1f} KiB written per "
          f"publish ({per_publish / DELTA_BYTES:.1f} per output byte), net growth "
          f"{growth_per_publish:.0f} bytes per publish beyond the body")
    print(f"{COMMANDS} commands x 10 KiB: {per_output_byte:.2f} bytes written per output byte "
          f"(random printable text: {random_per_output_byte:.2f}, no target)")
    print(f"targets: <= 24 KiB per publish, <= 100 bytes growth, <= 4 per output byte: "
          f"{'MET' if met else 'NOT MET'}")
    record("storage writes (5,000 x 4 KiB deltas; 1,000 x 10 KiB commands; real shell output; "
           "write_bytes)",
           {"stream_kib_per_publish": per_publish / KIB,
            "stream_growth_bytes_per_publish": growth_per_publish,
            "commands_written_per_output_byte": per_output_byte,
            "random_text_commands_written_per_output_byte": random_per_output_byte},
           "<= 24 KiB, <= 100 B, <= 4 (random text: none)", met)


if __name__ == "__main__":
    main()

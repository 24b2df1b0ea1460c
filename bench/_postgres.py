"""What the PostgreSQL benchmarks share: a durable local PostgreSQL (fsync on, as production
runs it), and the CPU time processes spent, read from /proc."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shellexec.app.local_postgres import LocalPostgres

from _service import cpu_seconds


@contextmanager
def local_postgres() -> Iterator[LocalPostgres]:
    server = LocalPostgres.create(durable=True)
    try:
        yield server
    finally:
        server.remove()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                continue
            if parent == pid:
                found.append(int(entry.name))
    return found


def postgres_cpu_seconds(server: LocalPostgres) -> float:
    """CPU seconds of the PostgreSQL server and its live backends (a backend that exited
    meanwhile is not counted: the benchmarks keep their connections open)."""
    assert server.process is not None
    total = 0.0
    for pid in (server.process.pid, *_children(server.process.pid)):
        try:
            total += cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total

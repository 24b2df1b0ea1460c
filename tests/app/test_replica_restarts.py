"""A replica of `shellexec up --replicas N` that exits is started again, at once after a long
run and with a doubling wait (capped) after each quick exit in a row (ADR 0116). The clock is
passed in: only the replica processes are real."""

from __future__ import annotations

import os
from pathlib import Path

from shellexec.app.replicas import (
    LONGEST_RESTART_DELAY_SECONDS,
    STABLE_AFTER_SECONDS,
    Replica,
    restart_delay,
)

EXIT_TIMEOUT_S = 30


def test_the_wait_doubles_with_each_quick_exit_up_to_the_longest() -> None:
    assert [restart_delay(exits) for exits in range(8)] == [0, 1, 2, 4, 8, 16, 30, 30]
    assert restart_delay(100_000) == LONGEST_RESTART_DELAY_SECONDS  # no float overflow


def _failing_replica(tmp_path: Path) -> Replica:
    # A setting `serve` refuses: the process exits with status 2 right after it starts.
    env = {**os.environ, "SHELLEXEC_LOG": "not-a-level"}
    return Replica(1, "127.0.0.1:1", env, tmp_path / "replica-1.log")


def _exited(replica: Replica) -> None:
    assert replica.process is not None
    replica.process.wait(timeout=EXIT_TIMEOUT_S)


def test_a_replica_that_keeps_exiting_is_started_again_less_and_less_often(
        tmp_path: Path) -> None:
    replica = _failing_replica(tmp_path)
    replica.start(now=0.0)
    first_pid = replica.pid
    _exited(replica)
    assert replica.supervise(now=0.5) == (
        "replica 1 (127.0.0.1:1) exited with status 2 after 0 s; starting it again in 1 s "
        "(log .run/replica-1.log)")
    assert replica.supervise(now=1.0) is None  # still waiting
    assert replica.supervise(now=1.5) == f"replica 1 (127.0.0.1:1) started again, pid {replica.pid}"
    assert replica.pid != first_pid
    _exited(replica)
    news = replica.supervise(now=2.0)
    assert news is not None
    assert news.endswith("starting it again in 2 s (log .run/replica-1.log)")
    assert "SHELLEXEC_LOG" in (tmp_path / "replica-1.log").read_text()  # both runs logged


def test_a_replica_that_ran_for_a_while_is_started_again_at_once(tmp_path: Path) -> None:
    replica = _failing_replica(tmp_path)
    replica.quick_exits = 5  # earlier trouble, then a long run
    replica.start(now=0.0)
    _exited(replica)
    news = replica.supervise(now=STABLE_AFTER_SECONDS + 1)
    assert news is not None
    assert "starting it again in 0 s" in news
    assert replica.supervise(now=STABLE_AFTER_SECONDS + 1) is not None  # started
    replica.stop()

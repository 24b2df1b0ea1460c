"""Review probe (ADR 0116): starting an exited replica again can fail (its log cannot be
opened: `.run` removed, disk full; fork refused under memory pressure). `Replica.supervise`
lets that OSError out of `up`'s loop, and `run_cluster`'s ExitStack then stops every other,
healthy replica and Envoy: one failed restart takes the whole cluster down."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from shellexec.app.replicas import Replica

EXIT_TIMEOUT_S = 30


def test_a_restart_that_cannot_start_is_reported_not_raised(tmp_path: Path) -> None:
    run = tmp_path / ".run"
    run.mkdir()
    # A setting `serve` refuses: the process exits with status 2 right after it starts.
    replica = Replica(1, "127.0.0.1:1", {**os.environ, "SHELLEXEC_LOG": "not-a-level"},
                      run / "replica-1.log")
    replica.start(now=0.0)
    assert replica.process is not None
    replica.process.wait(timeout=EXIT_TIMEOUT_S)
    assert replica.supervise(now=0.5) is not None  # exited; starting again in 1 s
    shutil.rmtree(run)  # the log's folder is gone when the wait is over
    try:
        news = replica.supervise(now=2.0)
    except OSError as error:
        raise AssertionError(f"supervise raised {error!r}: `up` would stop every replica") \
            from error
    assert news is not None
    replica.stop()

"""When `up` cannot start an exited replica again, it says why and keeps the cluster: a restart
that fails (its log cannot be opened, fork refused under memory pressure) waits and is tried
again, and a port another program took meanwhile is named (ADR 0116)."""

from __future__ import annotations

import os
import shutil
import socket
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
    assert "could not be started again" in news
    assert "trying again in 2 s" in news
    run.mkdir()  # the folder is back: the next attempt, once its wait is over, starts it
    assert replica.supervise(now=3.0) is None
    assert replica.supervise(now=4.5) == f"replica 1 (127.0.0.1:1) started again, pid {replica.pid}"
    replica.stop()


def test_a_port_taken_while_the_replica_was_down_is_named(tmp_path: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        target = f"127.0.0.1:{squatter.getsockname()[1]}"
        replica = Replica(1, target, {**os.environ, "SHELLEXEC_GRPC_ADDRESS": target,
                                      "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'r.db'}",
                                      "SHELLEXEC_METRICS_PORT": "0"},
                          tmp_path / "replica-1.log")
        replica.start(now=0.0)
        assert replica.process is not None
        assert replica.process.wait(timeout=EXIT_TIMEOUT_S) != 0
        news = replica.supervise(now=0.5)
    assert news is not None
    assert f"another program now holds its port {target.rsplit(':', 1)[1]}" in news
    assert "starting it again in 1 s" in news
    replica.stop()

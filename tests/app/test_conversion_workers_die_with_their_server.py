"""A server killed by a signal (the out-of-memory killer, SIGKILL) takes its conversion workers
(api/offload.py) with it: they would otherwise block on their call queue forever, orphaned,
while `up` starts a new replica beside them (ADR 0116)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf import struct_pb2

from shellexec.app import ports
from shellexec.app.replicas import Replica
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.acp import codex_start
from support.processes import children, gone
from support.stack import free_port

START_TIMEOUT_S = 60.0


def _wait_ready(replica: Replica) -> None:
    process = replica.process
    assert process is not None
    assert ports.wait_answering(replica.target, START_TIMEOUT_S,
                                still_starting=lambda: process.poll() is None)


def _large_normalize(target: str) -> None:
    """A NormalizeShellExec of more than 16 KiB: converted in the worker pool."""
    update = struct_pb2.Value()
    update.struct_value.update(codex_start("big", "echo " + "x" * 40_000))
    with grpc.insecure_channel(target) as channel:
        pb_grpc.ShellExecServiceStub(channel).NormalizeShellExec(
            pb.NormalizeShellExecRequest(updates=[update]), timeout=30)


@pytest.mark.slow
def test_a_killed_replica_leaves_no_worker_processes_behind(tmp_path: Path) -> None:
    target = f"127.0.0.1:{free_port()}"
    env = {**os.environ, "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'r.db'}",
           "SHELLEXEC_GRPC_ADDRESS": target, "SHELLEXEC_METRICS_PORT": "0",
           "SHELLEXEC_CONVERSION_WORKERS": "1"}
    replica = Replica(1, target, env, tmp_path / "replica-1.log")
    replica.start(time.monotonic())
    leftover: set[int] = set()
    try:
        _wait_ready(replica)
        _large_normalize(target)
        workers = children(replica.pid)
        assert workers, "the large request started no worker process"
        os.kill(replica.pid, signal.SIGKILL)
        assert replica.process is not None
        replica.process.wait(timeout=30)
        assert replica.supervise(time.monotonic()) is not None  # seen to have exited
        replica.stop()  # what `up` does at shutdown
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(gone(pid) for pid in workers):
            time.sleep(0.2)
        leftover = {pid for pid in workers if not gone(pid)}
        assert not leftover, f"orphaned worker processes still running: {sorted(leftover)}"
    finally:
        replica.stop()
        for pid in leftover:  # processes this test started
            os.kill(pid, signal.SIGKILL)

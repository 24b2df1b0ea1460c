"""The conversion workers (api/offload.py) and their server: a server killed by a signal (the
out-of-memory killer, SIGKILL) takes its workers with it, since they would otherwise block on
their call queue forever, orphaned, while `up` starts a new replica beside them (ADR 0116); a
worker killed alone costs no request."""

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


def _large_normalize(target: str) -> pb.NormalizeShellExecResponse:
    """A NormalizeShellExec of more than 16 KiB: converted in the worker pool."""
    update = struct_pb2.Value()
    update.struct_value.update(codex_start("big", "echo " + "x" * 40_000))
    with grpc.insecure_channel(target) as channel:
        answer: pb.NormalizeShellExecResponse = pb_grpc.ShellExecServiceStub(
            channel).NormalizeShellExec(pb.NormalizeShellExecRequest(updates=[update]),
                                        timeout=30)
    return answer


def _workers(server_pid: int) -> set[int]:
    """The server's worker processes (not multiprocessing's resource tracker)."""
    return {pid for pid in children(server_pid)
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()}


def _replica(tmp_path: Path) -> Replica:
    target = f"127.0.0.1:{free_port()}"
    env = {**os.environ, "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'r.db'}",
           "SHELLEXEC_GRPC_ADDRESS": target, "SHELLEXEC_METRICS_PORT": "0",
           "SHELLEXEC_CONVERSION_WORKERS": "1"}
    return Replica(1, target, env, tmp_path / "replica-1.log")


@pytest.mark.slow
def test_a_killed_replica_leaves_no_worker_processes_behind(tmp_path: Path) -> None:
    replica = _replica(tmp_path)
    target = replica.target
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


@pytest.mark.slow
def test_a_killed_worker_costs_no_request(tmp_path: Path) -> None:
    """The out-of-memory killer picks the largest process, often a worker: the request it
    held, or the next large one, was answered INTERNAL. It now runs again in a new worker."""
    replica = _replica(tmp_path)
    replica.start(time.monotonic())
    try:
        _wait_ready(replica)
        assert _large_normalize(replica.target).shell_exec.command.startswith("echo x")
        [worker] = _workers(replica.pid)
        os.kill(worker, signal.SIGKILL)
        assert _large_normalize(replica.target).shell_exec.command.startswith("echo x")
        assert _large_normalize(replica.target).shell_exec.command.startswith("echo x")
        assert _workers(replica.pid) - {worker}, "no new worker was started"
        assert "a conversion worker died" in replica.log.read_text()
    finally:
        replica.stop()

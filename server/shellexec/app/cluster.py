"""`shellexec up --replicas N`: N server processes on one PostgreSQL database, behind one Envoy
that balances across them and health-checks each (a replica that dies or is not ready leaves
the rotation; ADR 0072).

Without a PostgreSQL URL (`--database` or SHELLEXEC_DATABASE_URL), a local PostgreSQL is
started for trying it (`local_postgres`), in a temporary folder that goes with it on Ctrl-C.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path

import grpc

from shellexec.app import envoy, ports, processes
from shellexec.app.local_postgres import LocalPostgres
from shellexec.app.settings import Settings
from shellexec.store import open_database
from shellexec.store.postgres import is_postgres_url

RUN_DIR = Path(".run")
# Seconds a replica may take to start serving.
REPLICA_START_SECONDS = 60.0


class ClusterError(RuntimeError):
    """The replicas cannot be started as asked."""


def replica_env(settings: Settings, database_url: str, port: int,
                metrics_port: int) -> dict[str, str]:
    """The environment of one replica: ours, with its own port and the shared database."""
    host = ports.split_address(settings.grpc_address)[0]
    return {**os.environ, "SHELLEXEC_DATABASE_URL": database_url,
            "SHELLEXEC_GRPC_ADDRESS": f"{host}:{port}",
            "SHELLEXEC_METRICS_PORT": str(metrics_port)}


def _wait_serving(target: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ClusterError(f"the replica on {target} exited while starting")
        with grpc.insecure_channel(target) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=0.5)
                return
            except grpc.FutureTimeoutError:
                pass
    raise ClusterError(f"the replica on {target} did not start in {timeout:.0f} s")


@contextmanager
def _database(settings: Settings, database: str | None) -> Iterator[str]:
    """The PostgreSQL URL the replicas share: the one given, else a local server's."""
    url = database or settings.database_url
    if is_postgres_url(url):
        yield url
        return
    if database:
        raise ClusterError("several replicas share a PostgreSQL database: --database must be "
                           "a postgresql:// URL")
    local = LocalPostgres.create()
    print(f"local PostgreSQL in {local.folder} (removed on Ctrl-C)", flush=True)
    try:
        yield local.url()
    finally:
        local.remove()


@contextmanager
def _replica(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "ab") as sink:  # the child keeps its own copy
        process = subprocess.Popen([sys.executable, "-m", "shellexec.app.cli", "serve"],
                                   env=env, stdout=subprocess.DEVNULL, stderr=sink)
    try:
        yield process
    finally:
        processes.stop(process, timeout=10)


def _banner(settings: Settings, url: str, targets: list[str]) -> str:
    rest = f"http://{settings.rest_host}:{settings.rest_port}"
    return "\n".join((
        f"shellexec is running with {len(targets)} replicas (Ctrl-C stops them)",
        f"  REST + web page   {rest}/   (Envoy balances across the replicas)",
        *(f"  replica {index + 1}         {target}  (log .run/replica-{index + 1}.log)"
          for index, target in enumerate(targets)),
        f"  database          {url.split('@')[-1]}",
        "Try:",
        f"  curl -s -X POST {rest}/api/v1/task-sessions -d '{{\"task_id\":\"demo\"}}'",
    ))


def run_cluster(settings: Settings, replicas: int, database: str | None,
                stopped: threading.Event) -> int:
    """Starts everything, waits until `stopped` is set (Ctrl-C) or Envoy exits, then stops
    everything it started; returns the exit status."""
    if replicas < 1:
        raise ClusterError("--replicas must be at least 1")
    RUN_DIR.mkdir(exist_ok=True)
    with ExitStack() as started:
        url = started.enter_context(_database(settings, database))
        open_database(url, pool_size=2).close()  # migrated once, before the replicas race
        host = ports.split_address(settings.grpc_address)[0]
        grpc_ports = [ports.free_port(host) for _ in range(replicas)]
        targets = [f"{host}:{port}" for port in grpc_ports]
        for index, port in enumerate(grpc_ports):
            metrics = settings.metrics_port + index if settings.metrics_port else 0
            process = started.enter_context(_replica(
                replica_env(settings, url, port, metrics), RUN_DIR / f"replica-{index + 1}.log"))
            _wait_serving(targets[index], process, REPLICA_START_SECONDS)
        config = RUN_DIR / "envoy.yaml"
        config.write_text(envoy.render(replace(settings, database_url=url), *grpc_ports))
        front = envoy.launch(config, Path(settings.admin_socket))
        started.callback(processes.stop, front, 5)
        print(_banner(settings, url, targets), flush=True)
        while front.poll() is None:
            if stopped.wait(0.5):
                return 0
        return 1
    return 1  # unreachable: mypy cannot see that ExitStack does not swallow exceptions

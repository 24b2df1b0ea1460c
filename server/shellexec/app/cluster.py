"""`shellexec up --replicas N`: N server processes on one PostgreSQL database, behind one Envoy
that balances across them and health-checks each (a replica that dies or is not ready leaves
the rotation; ADR 0072). A replica that exits is started again (`replicas`, ADR 0116).

Without a PostgreSQL URL (`--database` or SHELLEXEC_DATABASE_URL), a local PostgreSQL is
started for trying it (`local_postgres`), in a temporary folder that goes with it on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from shellexec.app import certificate_expiry, envoy, ports, processes
from shellexec.app.local_postgres import LocalPostgres
from shellexec.app.replicas import Replica
from shellexec.app.server import curl_flags, front_door_url, metrics_lines
from shellexec.app.settings import Settings
from shellexec.store import open_database, shown_database_url
from shellexec.store.postgres import is_postgres_url

RUN_DIR = Path(".run")
# Seconds a replica may take to start serving.
REPLICA_START_SECONDS = 60.0
# How often the replicas are looked at (and Ctrl-C is noticed).
SUPERVISE_SECONDS = 0.5


# More would only share the machine's cores; the ports they take are drawn from a range.
MAX_REPLICAS = 64


class ClusterError(RuntimeError):
    """The replicas cannot be started as asked."""


def replica_env(settings: Settings, database_url: str, port: int,
                metrics_port: int) -> dict[str, str]:
    """The environment of one replica: ours, with its own port and the shared database."""
    host = ports.split_address(settings.grpc_address)[0]
    # A replica runs no Envoy: the front door's statistics port is not its to check. Stopped
    # by SIGTERM, it keeps serving for the front door's health checks to hear that it is not
    # ready (a call that came meanwhile was cancelled, unretried: 12 in 51 restarts).
    return {**os.environ, "SHELLEXEC_DATABASE_URL": database_url,
            "SHELLEXEC_GRPC_ADDRESS": f"{host}:{port}",
            "SHELLEXEC_PROBE_SECRET": settings.probe_secret,
            "SHELLEXEC_METRICS_PORT": str(metrics_port), "SHELLEXEC_ENVOY_METRICS_PORT": "0",
            "SHELLEXEC_DRAIN_SECONDS": str(envoy.REPLICA_DRAIN_SECONDS)}


def _wait_serving(replica: Replica, timeout: float) -> None:
    target, process = replica.target, replica.process
    assert process is not None
    if ports.wait_answering(target, timeout, still_starting=lambda: process.poll() is None):
        return
    if process.poll() is not None:
        raise ClusterError(f"the replica on {target} exited while starting")
    raise ClusterError(f"the replica on {target} did not start in {timeout:.0f} s")


@dataclass
class _SharedDatabase:
    """The PostgreSQL the replicas share, and the local server `up` started for it, if any."""

    url: str
    local: LocalPostgres | None = None
    # Said once that the local server does not start again, until it does.
    failing: bool = False

    def supervise(self) -> str | None:
        """Starts the local server again if it exited (as a replica is), and says so. It
        died without a word before, and the replicas answered UNAVAILABLE until Ctrl-C; one
        an operator started again by hand was not `up`'s, and outlived it."""
        local = self.local
        if local is None or local.process is None or (code := local.process.poll()) is None:
            return None
        try:
            local.start()
        except RuntimeError as error:  # tried again at the next look
            said, self.failing = self.failing, True
            return None if said else (f"the local PostgreSQL exited (code {code}) and does "
                                      f"not start again (trying on): {error}")
        self.failing = False
        return f"the local PostgreSQL exited (code {code}); started again"


@contextmanager
def _database(settings: Settings, database: str | None) -> Iterator[_SharedDatabase]:
    """The PostgreSQL the replicas share: the one given, else a local server."""
    url = database or settings.database_url
    if is_postgres_url(url):
        yield _SharedDatabase(url)
        return
    if database:
        raise ClusterError("several replicas share a PostgreSQL database: --database must be "
                           "a postgresql:// URL")
    local = LocalPostgres.create()
    print(f"local PostgreSQL in {local.folder} (removed on Ctrl-C)", flush=True)
    try:
        yield _SharedDatabase(local.url(), local)
    finally:
        local.remove()


def _banner(settings: Settings, url: str, replicas: list[Replica]) -> str:
    rest = front_door_url(settings)
    flags = curl_flags(settings)
    return "\n".join((
        f"shellexec is running with {len(replicas)} replicas (Ctrl-C stops them; one that "
        "exits is started again)",
        f"  REST + web page   {rest}/   (Envoy balances across the replicas)",
        *(f"  replica {replica.number}         {replica.target}  (pid {replica.pid}, log "
          f".run/{replica.log.name})" for replica in replicas),
        f"  database          {shown_database_url(url)}",
        *metrics_lines(settings, len(replicas)),
        "Try:",
        f"  curl -s{flags} -X POST {rest}/api/v1/task-sessions -d '{{\"task_id\":\"demo\"}}'",
    ))


def _check_metrics_ports(settings: Settings, replicas: int) -> None:
    """Replica k serves its metrics on SHELLEXEC_METRICS_PORT + k - 1: none of those may be
    another listener's port, or past the last port."""
    if not settings.metrics_port:
        return
    others = {settings.rest_port: "SHELLEXEC_REST_PORT",
              settings.envoy_metrics_port: "SHELLEXEC_ENVOY_METRICS_PORT"}
    for index in range(replicas):
        port = settings.metrics_port + index
        if port > ports.MAX_PORT or port in others:
            clash = "is past 65535" if port > ports.MAX_PORT else f"is {others[port]}"
            raise ClusterError(
                f"replica {index + 1} would serve its metrics on SHELLEXEC_METRICS_PORT + "
                f"{index} = {port}, which {clash}: choose a SHELLEXEC_METRICS_PORT with "
                f"{replicas} free ports from it")


def check_cluster(settings: Settings, replicas: int) -> None:
    """Raises ClusterError when `replicas` servers cannot run with `settings`, before
    anything starts."""
    if not 1 <= replicas <= MAX_REPLICAS:
        raise ClusterError(f"--replicas must be from 1 to {MAX_REPLICAS}")
    _check_metrics_ports(settings, replicas)


def _stop_replicas(replicas: list[Replica]) -> None:
    # SIGINT: stopping together, no replica is left to take another's calls, so none drains
    # (SIGTERM, an operator's restart of one, does).
    processes.stop_together([replica.process for replica in replicas
                             if replica.process is not None], first=signal.SIGINT)


def run_cluster(settings: Settings, replicas: int, database: str | None,
                stopped: threading.Event) -> int:
    """Starts everything, waits until `stopped` is set (Ctrl-C) or Envoy exits, then stops
    everything it started; returns the exit status."""
    check_cluster(settings, replicas)
    # Before a database, a replica or `.run/envoy.yaml`: another `up` may own them.
    envoy.ensure_admin_socket_free(Path(settings.admin_socket))
    settings = settings.with_probe_secret()
    RUN_DIR.mkdir(exist_ok=True)
    with ExitStack() as started:
        shared = started.enter_context(_database(settings, database))
        url = shared.url
        open_database(url, pool_size=2).close()  # migrated once, before the replicas race
        host = ports.split_address(settings.grpc_address)[0]
        grpc_ports = ports.free_ports(host, replicas)
        started_replicas = []
        for index, port in enumerate(grpc_ports):
            metrics = settings.metrics_port + index if settings.metrics_port else 0
            replica = Replica(index + 1, f"{host}:{port}",
                              replica_env(settings, url, port, metrics),
                              RUN_DIR / f"replica-{index + 1}.log")
            replica.start(time.monotonic())
            started.callback(replica.stop)
            _wait_serving(replica, REPLICA_START_SECONDS)
            started_replicas.append(replica)
        config = RUN_DIR / "envoy.yaml"
        envoy.write_config(config, envoy.render(replace(settings, database_url=url),
                                                *grpc_ports))
        front = envoy.launch(config, Path(settings.admin_socket))
        started.callback(envoy.stop, front, Path(settings.admin_socket))
        # The replicas stop first, together, while Envoy still relays: open feeds get their
        # end_of_stream and calls in flight their answers (as `up` does with one server).
        started.callback(_stop_replicas, started_replicas)
        if settings.tls_cert_file:
            certificate_expiry.warn_if_expiring(Path(settings.admin_socket))
        print(_banner(settings, url, started_replicas), flush=True)
        while front.poll() is None:
            if (news := shared.supervise()) is not None:
                print(news, flush=True)
            for replica in started_replicas:
                if (news := replica.supervise(time.monotonic())) is not None:
                    print(news, flush=True)
            if stopped.wait(SUPERVISE_SECONDS):
                return 0
        return 1
    return 1  # unreachable: mypy cannot see that ExitStack does not swallow exceptions

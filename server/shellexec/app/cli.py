"""The `shellexec` command.

    shellexec up            gRPC server + Envoy front door (what `make run` starts);
                            --replicas N: N servers on PostgreSQL behind one Envoy
    shellexec serve         the gRPC server alone
    shellexec envoy-config  print the rendered Envoy configuration
    shellexec token ...     create, list or revoke bearer tokens
    shellexec bridge ...    run an ACP agent and stream its session into the service
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

from shellexec.app import certificate_expiry, envoy, ports, processes, token_cli
from shellexec.app.admin_socket import AdminSocketError
from shellexec.app.cluster import ClusterError, check_cluster, run_cluster
from shellexec.app.envoy_stats import STATS_HOST
from shellexec.app.exposure import UnsafeExposureError, check_exposure
from shellexec.app.local_postgres import PostgresMissingError
from shellexec.app.metrics_endpoint import METRICS_HOST
from shellexec.app.server import (
    auth_banner,
    curl_flags,
    front_door_url,
    metrics_lines,
    serve,
    start_server,
)
from shellexec.app.settings import Settings
from shellexec.store import (
    DatabaseOpenError,
    DatabaseUnavailableError,
    MigrationFailedError,
    NewerSchemaError,
    UnsupportedDatabaseError,
    database_url_problem,
    shown_database_url,
)

RUN_DIR = Path(".run")
# How long an exited Envoy's last lines may take to be passed on before `up` says it exited.
RELAY_FLUSH_SECONDS = 2.0


def _banner(settings: Settings, grpc_port: int) -> str:
    rest = front_door_url(settings)
    grpc_host = settings.grpc_address.rsplit(":", 1)[0]
    flags = curl_flags(settings)
    return "\n".join((
        "shellexec is running (Ctrl-C stops it)",
        f"  REST + web page   {rest}/   (open {rest}/?session=SESSION_ID)",
        f"  gRPC              {grpc_host}:{grpc_port}",
        f"  database          {shown_database_url(settings.database_url)}",
        f"  {auth_banner(settings)}",
        *metrics_lines(settings),
        f"  log               stderr, one JSON line per call and per front-door request "
        f"(SHELLEXEC_LOG={settings.log})",
        "Try:",
        f"  curl -s{flags} -X POST {rest}/api/v1/task-sessions -d '{{\"task_id\":\"demo\"}}'",
        f"  {Path(sys.executable).parent / 'grpcurl'} -plaintext {grpc_host}:{grpc_port} list",
    ))


def _exposed_hosts(settings: Settings, front_door: bool) -> dict[str, str]:
    hosts = {"SHELLEXEC_GRPC_ADDRESS": ports.split_address(settings.grpc_address)[0]}
    return {**hosts, "SHELLEXEC_REST_HOST": settings.rest_host} if front_door else hosts


def _grpc_listener(settings: Settings) -> ports.Listener:
    return ports.Listener("gRPC", *ports.split_address(settings.grpc_address),
                          "SHELLEXEC_GRPC_ADDRESS")


def _server_listeners(settings: Settings) -> tuple[ports.Listener, ...]:
    # Port 0 turns the metrics off: ensure_free skips it.
    return (ports.Listener("metrics", METRICS_HOST, settings.metrics_port,
                           "SHELLEXEC_METRICS_PORT"),)


def _front_door_listeners(settings: Settings) -> tuple[ports.Listener, ...]:
    # Envoy's admin interface is a Unix socket (ADR 0056): no port to check.
    return (ports.Listener("REST and web page", settings.rest_host, settings.rest_port,
                           "SHELLEXEC_REST_PORT"),
            ports.Listener("Envoy statistics", STATS_HOST, settings.envoy_metrics_port,
                           "SHELLEXEC_ENVOY_METRICS_PORT"))


async def _up(settings: Settings) -> int:
    settings = settings.with_probe_secret()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in processes.STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    # Before anything starts or `.run/envoy.yaml` is written: another `up` may own them.
    envoy.ensure_admin_socket_free(Path(settings.admin_socket))
    running = await start_server(settings)
    RUN_DIR.mkdir(exist_ok=True)
    config = RUN_DIR / "envoy.yaml"
    process: subprocess.Popen[bytes] | None = None
    try:
        envoy.write_config(config, envoy.render(settings, running.port))
        # Started from this thread, which ends with the process (processes.tied_to_us); only
        # the wait runs off the loop.
        process, node_id, relay = envoy.spawn(config, Path(settings.admin_socket))
        await asyncio.to_thread(envoy.wait_ready, Path(settings.admin_socket), process,
                                node_id)
        if settings.tls_cert_file:
            await asyncio.to_thread(certificate_expiry.warn_if_expiring,
                                    Path(settings.admin_socket))
        print(_banner(settings, running.port), flush=True)
        exited = asyncio.create_task(asyncio.to_thread(_wait_for_envoy, process, relay))
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({exited, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if stop.is_set():
            return 0
        print(f"shellexec: Envoy exited with status {process.returncode} (its own lines, if "
              "any, are above); stopping the server", file=sys.stderr, flush=True)
        return 1
    finally:
        # The server first, while Envoy still relays: open feeds get their end_of_stream and
        # calls in flight their answers.
        # No drain: no balancer checks `up`'s one server.
        await running.stop(settings.shutdown_grace_seconds)
        if process is not None:
            envoy.stop(process, Path(settings.admin_socket))
        print("shellexec stopped", flush=True)


def _wait_for_envoy(process: subprocess.Popen[bytes], relay: threading.Thread | None) -> None:
    """Until Envoy has exited and its last lines are passed on (they say why it exited)."""
    process.wait()
    if relay is not None:
        relay.join(RELAY_FLUSH_SECONDS)


def _up_replicas(settings: Settings, replicas: int, database: str | None) -> int:
    check_cluster(settings, replicas)  # "shellexec stopped" would come before its message
    stopped = threading.Event()
    for sig in processes.STOP_SIGNALS:
        signal.signal(sig, lambda *_: stopped.set())
    try:
        return run_cluster(settings, replicas, database, stopped)
    finally:
        print("shellexec stopped", flush=True)


def _port(value: str) -> int:
    """A TCP port from 1 to MAX_PORT, for argparse (which names the option when it fails)."""
    if not (value.isascii() and value.isdigit() and len(value) <= len(str(ports.MAX_PORT))
            and 1 <= int(value) <= ports.MAX_PORT):
        raise argparse.ArgumentTypeError(
            f"must be a port from 1 to {ports.MAX_PORT}, not {value[:16]!r}")
    return int(value)


def _envoy_config(settings: Settings, grpc_port: int | None) -> int:
    port = grpc_port if grpc_port is not None else int(settings.grpc_address.rsplit(":", 1)[1])
    if port == 0:  # any free port: a server's own choice, which Envoy cannot know
        print("shellexec: envoy-config needs the gRPC server's port: SHELLEXEC_GRPC_ADDRESS "
              "has port 0 (any free port), so pass --grpc-port", file=sys.stderr, flush=True)
        return 2
    sys.stdout.write(envoy.render(settings, port))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shellexec", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="run the gRPC server and the Envoy front door")
    up.add_argument("--replicas", type=int, default=1,
                    help="server processes behind Envoy (more than 1 needs PostgreSQL; "
                         "without a URL a local one is started)")
    up.add_argument("--database", help="the database URL (default: SHELLEXEC_DATABASE_URL)")
    commands.add_parser("serve", help="run the gRPC server alone")
    config = commands.add_parser("envoy-config", help="print the rendered Envoy configuration")
    config.add_argument("--grpc-port", type=_port, help="the gRPC server's port")
    token_cli.add_parser(commands)
    commands.add_parser("bridge", help="run an ACP agent and stream it into the service",
                        add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "bridge":
        from shellexec.bridge.cli import main as bridge_main

        return bridge_main(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if getattr(args, "database", None) is not None and (
            problem := database_url_problem(args.database)) is not None:
        print(f"shellexec: --database: {problem}", file=sys.stderr, flush=True)
        return 2
    try:
        settings = Settings.from_env()
    except ValueError as error:
        print(f"shellexec: {error}", file=sys.stderr, flush=True)
        return 2
    if args.command == "token":
        return token_cli.main(settings, args)
    try:
        if args.command == "envoy-config":
            # The configuration is a front door: the loopback-only rule holds for it too.
            check_exposure(settings, {"SHELLEXEC_REST_HOST": settings.rest_host})
            return _envoy_config(settings, args.grpc_port)
        check_exposure(settings, _exposed_hosts(settings, front_door=args.command == "up"))
        if args.command == "serve":
            ports.ensure_free(_grpc_listener(settings), *_server_listeners(settings))
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(serve(settings))
            return 0
        if args.replicas != 1:
            ports.ensure_free(*_front_door_listeners(settings))
            return _up_replicas(settings, args.replicas, args.database)
        if args.database:
            settings = replace(settings, database_url=args.database)
        ports.ensure_free(_grpc_listener(settings), *_server_listeners(settings),
                          *_front_door_listeners(settings))
        with contextlib.suppress(KeyboardInterrupt):
            return asyncio.run(_up(settings))
        return 0
    except (ports.PortInUseError, AdminSocketError, UnsafeExposureError, ClusterError,
            PostgresMissingError, NewerSchemaError, MigrationFailedError) as error:
        print(f"shellexec: {error}", file=sys.stderr, flush=True)
        return 1
    except envoy.EnvoyStartError as error:
        print(f"shellexec: the front door did not start ({error}); Envoy's own lines above "
              "say why", file=sys.stderr, flush=True)
        return 1
    except (UnsupportedDatabaseError, DatabaseOpenError, DatabaseUnavailableError) as error:
        source = "--database" if getattr(args, "database", None) else "SHELLEXEC_DATABASE_URL"
        print(f"shellexec: {source}: {error}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())

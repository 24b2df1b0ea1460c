"""Building and running the gRPC server: the one place that wires the object graph."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from shellexec.api import SERVICE_NAME, ShellExecServicer
from shellexec.api.reflection import enable_reflection
from shellexec.app.ports import PortInUseError
from shellexec.app.settings import Settings
from shellexec.feed import FeedHub
from shellexec.service import Publisher, Reader, Sessions, UnitCaches, random_id, system_clock
from shellexec.store import Database, open_database
from shellexec.v1 import shell_exec_service_pb2_grpc

MAX_MESSAGE_BYTES = 16 * 1024 * 1024


@dataclass
class RunningServer:
    """A started server, the port it bound and what must be closed after it stops."""

    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    feed: FeedHub
    database: Database

    async def stop(self, grace: float) -> None:
        """Ends every open feed stream at once (watchers resume by revision), then gives the
        other calls `grace` seconds to finish."""
        await self.health.enter_graceful_shutdown()
        self.feed.close()
        await self.server.stop(grace)
        self.database.close()


async def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


def _bench_echo_handler() -> grpc.GenericRpcHandler:
    """A raw-bytes echo on the same server: the baseline of bench/ingest_throughput.py."""
    return grpc.method_handlers_generic_handler(
        "shellexec.bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)})


def build_servicer(settings: Settings, database: Database, feed: FeedHub) -> ShellExecServicer:
    caches = UnitCaches(database)
    sessions = Sessions(database, feed, caches, system_clock, random_id)
    publisher = Publisher(database, feed, caches, system_clock, random_id)
    reader = Reader(database, feed, settings.heartbeat_seconds,
                    settings.stream_lifetime_seconds)
    return ShellExecServicer(sessions, publisher, reader)


async def start_server(settings: Settings) -> RunningServer:
    """Opens the database, builds the graph, binds and starts the server."""
    database = open_database(settings.database_url)
    feed = FeedHub()
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        # A second server on the same port must fail, not silently share its connections.
        ("grpc.so_reuseport", 0),
    ])
    shell_exec_service_pb2_grpc.add_ShellExecServiceServicer_to_server(
        build_servicer(settings, database, feed), server)
    if settings.bench_echo:
        server.add_generic_rpc_handlers((_bench_echo_handler(),))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    enable_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    try:
        port = server.add_insecure_port(settings.grpc_address)
    except RuntimeError as error:  # lost a race with another process since the check
        database.close()
        raise PortInUseError(f"cannot listen on {settings.grpc_address}: the port is in use "
                             "(set SHELLEXEC_GRPC_ADDRESS to choose another)") from error
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server, port, health_servicer, feed, database)


async def serve(settings: Settings, ready: asyncio.Event | None = None) -> None:
    """Runs the server until SIGINT or SIGTERM, then stops it gracefully."""
    running = await start_server(settings)
    print(f"shellexec gRPC listening on {settings.grpc_address.rsplit(':', 1)[0]}:{running.port}",
          flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready.set()
    await stop.wait()
    await running.stop(settings.shutdown_grace_seconds)

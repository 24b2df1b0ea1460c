"""Building and running the gRPC server around the object graph of `composition`."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from shellexec.api import SERVICE_NAME
from shellexec.api.call_log import CallLog
from shellexec.api.interceptor import ErrorInterceptor
from shellexec.api.reflection import enable_reflection
from shellexec.app.composition import Composition, compose
from shellexec.app.ports import PortInUseError
from shellexec.app.settings import Settings
from shellexec.rules.limits import MAX_GRPC_MESSAGE_BYTES
from shellexec.v1 import shell_exec_service_pb2_grpc


@dataclass
class RunningServer:
    """A started server, the port it bound and what must be closed after it stops."""

    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    app: Composition

    async def stop(self, grace: float) -> None:
        """Ends every open feed stream at once (watchers resume by revision), then gives the
        other calls `grace` seconds to finish."""
        await self.health.enter_graceful_shutdown()
        self.app.feed.close()
        await self.server.stop(grace)
        self.app.database.close()


async def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


def _bench_echo_handler() -> grpc.GenericRpcHandler:
    """A raw-bytes echo on the same server: the baseline of bench/ingest_throughput.py."""
    return grpc.method_handlers_generic_handler(
        "shellexec.bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)})


async def start_server(settings: Settings) -> RunningServer:
    """Opens the database, builds the graph, binds and starts the server."""
    app = compose(settings)
    # The error interceptor comes first, so it also maps and logs failures of any interceptor
    # after it.
    interceptor = ErrorInterceptor(CallLog(sys.stderr, settings.log))
    server = grpc.aio.server(interceptors=[interceptor], options=[
        ("grpc.max_receive_message_length", MAX_GRPC_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_GRPC_MESSAGE_BYTES),
        # A second server on the same port must fail, not silently share its connections.
        ("grpc.so_reuseport", 0),
    ])
    shell_exec_service_pb2_grpc.add_ShellExecServiceServicer_to_server(app.servicer, server)
    if settings.bench_echo:
        server.add_generic_rpc_handlers((_bench_echo_handler(),))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    enable_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    try:
        port = server.add_insecure_port(settings.grpc_address)
    except RuntimeError as error:  # lost a race with another process since the check
        app.database.close()
        raise PortInUseError(f"cannot listen on {settings.grpc_address}: the port is in use "
                             "(set SHELLEXEC_GRPC_ADDRESS to choose another)") from error
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server, port, health_servicer, app)


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

"""Building and running the gRPC server around the object graph of `composition`."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import sys
from dataclasses import dataclass

import grpc
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from shellexec.api import SERVICE_NAME
from shellexec.api.auth import Authenticator
from shellexec.api.call_log import CallLog
from shellexec.api.checked_tokens import CheckedTokens
from shellexec.api.handlers import method_handlers
from shellexec.api.interceptor import ErrorInterceptor
from shellexec.api.live_calls import LiveCalls
from shellexec.api.metrics_interceptor import MetricsInterceptor
from shellexec.api.path_binding import PathBindingInterceptor, PathPatterns
from shellexec.api.reflection import enable_reflection
from shellexec.api.request_budget import RequestBudget, RequestBudgetInterceptor
from shellexec.app import ports, processes
from shellexec.app.admin_socket import AdminSocketError
from shellexec.app.composition import Composition, compose
from shellexec.app.envoy_stats import STATS_HOST, STATS_PATH
from shellexec.app.exposure import check_exposure
from shellexec.app.health import Health
from shellexec.app.metrics import Metrics
from shellexec.app.metrics_endpoint import METRICS_HOST, METRICS_PATH, MetricsEndpoint
from shellexec.app.ports import PortInUseError
from shellexec.app.rest_bindings import bindings_of, path_patterns
from shellexec.app.settings import Settings
from shellexec.app.token_check import TokenCheckEndpoint
from shellexec.app.token_check import socket_path as token_check_socket
from shellexec.rules.limits import (
    GRPC_CONNECTION_IDLE_SECONDS,
    GRPC_HANDSHAKE_SECONDS,
    MAX_GRPC_CONNECTIONS,
    MAX_GRPC_MESSAGE_BYTES,
    MAX_REQUEST_HEADERS_BYTES,
    MAX_REQUEST_STREAMS,
    MAX_SERVER_CALLS,
    MAX_WAITING_CALLS_PER_CALLER,
    REQUEST_BUDGET_BYTES,
    REQUEST_BUDGET_BYTES_PER_CALLER,
)
from shellexec.v1 import shell_exec_service_pb2 as pb

# The metadata of one call: the front door's headers in all, and what Envoy adds to them.
MAX_SERVER_METADATA_BYTES = MAX_REQUEST_HEADERS_BYTES + 8 * 1024
_SERVER_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_GRPC_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_GRPC_MESSAGE_BYTES),
    # Whatever headers the front door passes on (a long query string comes along as
    # `x-envoy-original-path`): gRPC's own 16 KiB would refuse them as RESOURCE_EXHAUSTED,
    # and now and then below it (its soft limit).
    ("grpc.max_metadata_size", MAX_SERVER_METADATA_BYTES),
    ("grpc.absolute_max_metadata_size", MAX_SERVER_METADATA_BYTES),
    # A second server on the same port must fail, not silently share its connections.
    ("grpc.so_reuseport", 0),
    # Without this probing, a stream's window stays at HTTP/2's 64 KiB until its message is
    # read, so a call the request budget keeps waiting holds no more (with it, gRPC grew each
    # window to megabytes: 100 waiting 15 MB calls held 835 MB). On loopback and local
    # networks it costs large messages nothing measurable.
    ("grpc.http2.bdp_probe", 0),
    # Requests are taken uncompressed only (docs/api.md, "Limits"): a gzip message of 16 KB
    # inflated to the whole message limit, 1000 times as much to hold and parse. With identity
    # the one algorithm enabled, gRPC refuses any other as the call's metadata arrives, before
    # reading its message: UNIMPLEMENTED, "Compression algorithm 'gzip' is disabled." The
    # front door refuses such calls first, saying what to do. Answers are not compressed
    # either (nothing asks for it).
    ("grpc.compression_enabled_algorithms_bitset", 1),
    # Connections at once (MAX_GRPC_CONNECTIONS): nothing but the file descriptor limit bounded
    # them, and each costs gRPC's core 14-17 KB, which the allocator keeps after it closes.
    # Counted from accept, so connections that never finish HTTP/2's handshake, or that never
    # make a call, are closed after a while rather than hold their place.
    ("grpc.max_allowed_incoming_connections", MAX_GRPC_CONNECTIONS),
    ("grpc.server_handshake_timeout_ms", GRPC_HANDSHAKE_SECONDS * 1000),
    ("grpc.max_connection_idle_ms", GRPC_CONNECTION_IDLE_SECONDS * 1000),
)
# How long a stopping server must see no call of its own before it takes what gRPC still
# holds for lost (ADR 0144): far longer than a handed-over call takes to reach the
# interceptors, far shorter than the grace.
STOP_SETTLE_SECONDS = 0.2


@dataclass
class RunningServer:
    """A started server, the port it bound and what must be closed after it stops."""

    server: grpc.aio.Server
    port: int
    health: Health
    app: Composition
    housekeeping: asyncio.Task[None]
    live_calls: LiveCalls
    metrics: MetricsEndpoint | None = None
    # With authentication on: answers the front door's token checks (ADR 0119).
    token_check: TokenCheckEndpoint | None = None

    async def stop(self, grace: float, drain: float = 0.0,
                   cut_short: asyncio.Event | None = None) -> None:
        """Says NOT_SERVING, and keeps serving for `drain` seconds (until `cut_short` is set),
        for a balancer's health checks to hear it; then ends every open feed stream at once
        (watchers resume by revision), and gives the other calls `grace` seconds to finish."""
        await self.health.stop()
        if drain:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(drain):
                    await (cut_short or asyncio.Event()).wait()
        self.housekeeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.housekeeping
        if self.app.listener is not None:
            await asyncio.to_thread(self.app.listener.stop)
        if self.app.relay is not None:
            await self.app.relay.close()
        self.app.feed.close()
        await stop_serving(self.server, self.live_calls, grace)
        if self.token_check is not None:
            await self.token_check.stop()
        if self.metrics is not None:
            self.metrics.stop()
        self.app.close()


async def stop_serving(server: grpc.aio.Server, live_calls: LiveCalls, grace: float,
                       settle_seconds: float = STOP_SETTLE_SECONDS) -> None:
    """Stops `server`, letting its running calls finish for up to `grace` seconds, and no
    longer than they take.

    gRPC alone would also wait out the grace for a call it lost as it stopped, one no task
    runs (ADR 0144). So once none of the calls `live_calls` counts is left, what the core
    still holds is cancelled: a second `stop`, with no grace, does that."""
    stopping = asyncio.ensure_future(server.stop(grace))
    quiet = asyncio.ensure_future(live_calls.quiet(settle_seconds))
    await asyncio.wait((stopping, quiet), return_when=asyncio.FIRST_COMPLETED)
    quiet.cancel()
    if not stopping.done():
        await server.stop(0)
    await stopping


async def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


def _bench_echo_handler() -> grpc.GenericRpcHandler:
    """A raw-bytes echo on the same server: the baseline of bench/ingest_throughput.py."""
    return grpc.method_handlers_generic_handler(
        "shellexec.bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)})


def _path_patterns() -> PathPatterns:
    """The path templates of the service's REST bindings, from its own descriptor (the one
    `make generate` also gives Envoy)."""
    file = descriptor_pb2.FileDescriptorProto.FromString(pb.DESCRIPTOR.serialized_pb)
    return path_patterns(bindings_of([file]))


def _request_budget(metrics: Metrics) -> RequestBudgetInterceptor:
    """What the server holds of requests at once (ADR 0140), with its gauges."""
    budget = RequestBudget(REQUEST_BUDGET_BYTES, REQUEST_BUDGET_BYTES_PER_CALLER,
                           MAX_GRPC_MESSAGE_BYTES, MAX_WAITING_CALLS_PER_CALLER)
    interceptor = RequestBudgetInterceptor(budget, MAX_REQUEST_STREAMS)
    metrics.request_bytes.set_function(lambda: budget.held)
    metrics.waiting_requests.set_function(budget.waiting)
    metrics.request_streams.set_function(lambda: interceptor.request_streams)
    return interceptor


async def start_server(settings: Settings) -> RunningServer:
    """Opens the database, builds the graph, binds and starts the server."""
    check_exposure(settings, {"SHELLEXEC_GRPC_ADDRESS": ports.split_address(
        settings.grpc_address)[0]})
    app = compose(settings)
    # The front door's token check leaves each caller it finds for the call it admits.
    checked = CheckedTokens(app.tokens.authenticate)
    authenticator = Authenticator(checked.authenticate if settings.auth else None,
                                  probe_secret=settings.probe_secret)
    # The live calls come first, so a stopping server waits for every call it runs. The
    # metrics interceptor is next, so it counts the status callers get from every
    # interceptor after it (it reports the same status wherever it stands). The error
    # interceptor is next, so it also maps and logs failures of any interceptor after it (and
    # refused calls get a request id). The request budget admits a call once authentication
    # has named its caller. Last, nearest the servicer, a transcoded call's request is held
    # to the resources its path names.
    live_calls = LiveCalls()
    interceptors = [live_calls, MetricsInterceptor(app.metrics.requests, app.metrics.latency),
                    ErrorInterceptor(CallLog(sys.stderr, settings.log)),
                    _request_budget(app.metrics), authenticator,
                    PathBindingInterceptor(_path_patterns())]
    server = grpc.aio.server(interceptors=interceptors, options=_SERVER_OPTIONS,
                             maximum_concurrent_rpcs=MAX_SERVER_CALLS)
    handlers = method_handlers(app.servicer)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)
    if settings.bench_echo:
        server.add_generic_rpc_handlers((_bench_echo_handler(),))
    health_servicer = Health(app.database.readiness_problem,
                             settings.readiness_check_seconds, settings.probe_secret)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    enable_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    try:
        port = server.add_insecure_port(settings.grpc_address)
    except RuntimeError as error:  # lost a race with another process since the check
        app.close()
        raise PortInUseError(f"cannot listen on {settings.grpc_address}: the port is in use "
                             "(set SHELLEXEC_GRPC_ADDRESS to choose another)") from error
    metrics = _metrics_endpoint(app, settings)
    token_check = None
    if settings.auth:
        token_check = TokenCheckEndpoint(
            token_check_socket(settings.admin_socket, port), checked.check,
            health_servicer.ready)
        try:
            await token_check.start()
        except (AdminSocketError, OSError):  # a folder others may enter, or a path too long
            app.close()
            raise
    await health_servicer.start()
    if app.listener is not None:
        app.listener.start()
    await server.start()
    if metrics is not None:
        metrics.start()
    # On the loop like every write: a sweep's transactions take turns with ingest's.
    sweeping = asyncio.create_task(app.housekeeping.run(settings.housekeeping_seconds))
    return RunningServer(server, port, health_servicer, app, sweeping, live_calls, metrics,
                         token_check)


def _metrics_endpoint(app: Composition, settings: Settings) -> MetricsEndpoint | None:
    """The metrics' own HTTP endpoint, bound (not yet serving), or None when it is off."""
    if not settings.metrics_port:
        return None
    try:
        return MetricsEndpoint(app.metrics.registry, settings.metrics_port)
    except PortInUseError:
        app.database.close()
        raise


def front_door_url(settings: Settings) -> str:
    """The front door's address as the banners print it: https when it serves TLS."""
    scheme = "https" if settings.tls_cert_file else "http"
    return f"{scheme}://{settings.rest_host}:{settings.rest_port}"


def curl_flags(settings: Settings) -> str:
    """The curl flags of the banners' examples: the front door's certificate to trust when it
    serves TLS (a self-signed one is in no trust store), and the token (the caller's $TOKEN,
    in double quotes so the shell fills it in) when authentication is on."""
    trust = f" --cacert {shlex.quote(settings.tls_cert_file)}" if settings.tls_cert_file else ""
    return trust + (' -H "authorization: Bearer $TOKEN"' if settings.auth else "")


def metrics_lines(settings: Settings, replicas: int = 1) -> tuple[str, ...]:
    """The banners' lines naming the metrics URLs: each replica's (on consecutive ports from
    SHELLEXEC_METRICS_PORT) and Envoy's statistics."""
    lines = []
    for index in range(replicas if settings.metrics_port else 0):
        label = f"replica {index + 1} metrics" if replicas > 1 else "metrics"
        lines.append(f"  {label:<18}http://{METRICS_HOST}:{settings.metrics_port + index}"
                     f"{METRICS_PATH}")
    if settings.envoy_metrics_port:
        lines.append(f"  {'Envoy statistics':<18}http://{STATS_HOST}:"
                     f"{settings.envoy_metrics_port}{STATS_PATH}")
    return tuple(lines)


def auth_banner(settings: Settings) -> str:
    """How callers authenticate, as the start-up banners say it."""
    if settings.auth:
        return "authentication on (bearer tokens: `shellexec token create --help`)"
    return "authentication off (loopback only)"


async def serve(settings: Settings, ready: asyncio.Event | None = None) -> None:
    """Runs the server until SIGINT, SIGTERM or SIGHUP, then stops it gracefully."""
    running = await start_server(settings)
    print(f"shellexec gRPC listening on {settings.grpc_address.rsplit(':', 1)[0]}:{running.port}"
          f", {auth_banner(settings)}", flush=True)
    signals: asyncio.Queue[signal.Signals] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    for sig in processes.STOP_SIGNALS:
        loop.add_signal_handler(sig, signals.put_nowait, sig)
    if ready is not None:
        ready.set()
    first = await signals.get()
    # SIGTERM stops one server among several (an operator's rolling restart, a process
    # manager): it drains. SIGINT (Ctrl-C, and `up` stopping all its replicas together, when
    # no other is left to take the calls) stops at once, and so does a second signal.
    again = asyncio.Event()
    second = loop.create_task(signals.get())
    second.add_done_callback(lambda _: again.set())
    drain = settings.drain_seconds if first == signal.SIGTERM else 0.0
    try:
        await running.stop(settings.shutdown_grace_seconds, drain, again)
    finally:
        second.cancel()

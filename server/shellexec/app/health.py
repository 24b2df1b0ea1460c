"""The gRPC health service: liveness and readiness under their own service names.

- `liveness`: SERVING while the process answers at all (a restart is the cure otherwise).
- `""` and `shellexec.v1.ShellExecService`: readiness, SERVING while the database file is
  there and has every migration applied (`store.readiness`), NOT_SERVING otherwise (send no
  traffic, a restart will not necessarily help).

Readiness is checked every `interval` seconds (what `Watch` callers hear) and again on each
`Check` of a readiness name, so a probe never reads a stale answer; checks that overlap share
one run, so a burst of probes costs one file open. Stopping sets every name NOT_SERVING,
except for the checks the front door passes on (marked with the run's probe secret, ADR
0140): a stopping replica answers those UNAVAILABLE, which the front door retries on another
replica, so its clients' probes hear about the service, not about one replica's restart.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import grpc
from grpc_health.v1 import health, health_pb2

from shellexec.api import SERVICE_NAME
from shellexec.api.auth import FRONT_DOOR_CHECK_HEADER, carries_secret

LIVENESS = "liveness"
READINESS = ("", SERVICE_NAME)
SERVICE_NAMES = (LIVENESS, *READINESS)

STOPPING = "this server is stopping: the front door asks another replica, if it has one"
# None when ready, otherwise why not; blocking, so it runs on a worker thread.
ReadinessCheck = Callable[[], str | None]


class Health(health.aio.HealthServicer):
    """grpc_health's servicer, with readiness kept up to date from `check`."""

    def __init__(self, check: ReadinessCheck, interval: float,
                 probe_secret: str = "") -> None:
        super().__init__()
        self._check = check
        self._interval = interval
        self._probe_secret = probe_secret.encode()
        self._running: asyncio.Task[bool] | None = None
        self._watching: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        """Sets liveness, checks readiness once and keeps checking it."""
        await self.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        await self.refresh()
        self._watching = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        """Every name NOT_SERVING from now on (grpc_health ignores later changes)."""
        self._stopping = True
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
        await self.enter_graceful_shutdown()

    async def ready(self) -> bool:
        """Readiness as a readiness `Check` answers it: checked now, and never while
        stopping (for probes that are not gRPC: the front door's token check's)."""
        return not self._stopping and await self.refresh()

    async def refresh(self) -> bool:
        """Runs the readiness check (or joins the one running) and publishes its answer."""
        if self._running is None or self._running.done():
            self._running = asyncio.get_running_loop().create_task(self._run_check())
        return await asyncio.shield(self._running)

    async def _run_check(self) -> bool:
        try:
            ready = await asyncio.to_thread(self._check) is None
        except Exception:  # a check that cannot run cannot vouch for the database
            ready = False
        status = (health_pb2.HealthCheckResponse.SERVING if ready
                  else health_pb2.HealthCheckResponse.NOT_SERVING)
        for name in READINESS:
            await self.set(name, status)
        return ready

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.refresh()

    # gRPC names the method.
    async def Check(self, request: health_pb2.HealthCheckRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> health_pb2.HealthCheckResponse:
        if self._stopping and carries_secret(context.invocation_metadata(),
                                             FRONT_DOOR_CHECK_HEADER, self._probe_secret):
            await context.abort(grpc.StatusCode.UNAVAILABLE, STOPPING)
        if request.service in READINESS:
            await self.refresh()
        return await super().Check(request, context)

"""Retrying service calls: exponential backoff inside a bounded outage window.

A call that fails with a retryable gRPC status is tried again after 0.1 s, 0.2 s, 0.4 s ...
(capped at `max_delay`, with jitter so restarted bridges do not call in lockstep) until it
succeeds or `window` seconds have passed since its first failure; then the outage is reported
as `ServiceUnavailableError`. A definite answer (NOT_FOUND, INVALID_ARGUMENT ...) is not retried.
Every call the bridge retries is idempotent: publishes carry their sequence number, and session
creation and turn start a request id, which the service deduplicates. See docs/adr/0031 and
docs/adr/0007.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import grpc

from shellexec.bridge.errors import (
    START_HINT,
    BridgeError,
    ServiceRejectedError,
    ServiceUnavailableError,
)
from shellexec.bridge.tls_failures import tls_failure
from shellexec.client import error_details

T = TypeVar("T")
log = logging.getLogger("shellexec.bridge")

# UNAVAILABLE: no server / connection lost; DEADLINE_EXCEEDED: a hung or overloaded server;
# ABORTED, RESOURCE_EXHAUSTED: transient contention; INTERNAL: a crash mid-call; CANCELLED: a
# stopping server cancels the calls that reach it as it stops (the bridge's own cancellation
# raises CancelledError, never this). A retry of an already-applied call is harmless
# (sequence numbers, request ids), so erring on "retry" is safe.
RETRYABLE = frozenset({
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.INTERNAL,
})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long an outage may last (`window`, seconds) and how often to try meanwhile."""

    window: float = 60.0
    first_delay: float = 0.1
    max_delay: float = 2.0
    multiplier: float = 2.0

    def delays(self) -> Callable[[], float]:
        """A fresh backoff sequence: each call returns the next delay, jittered +-20 %."""
        current = self.first_delay

        def next_delay() -> float:
            nonlocal current
            delay = current * random.uniform(0.8, 1.2)
            current = min(current * self.multiplier, self.max_delay)
            return delay

        return next_delay


def describe(error: grpc.aio.AioRpcError) -> str:
    """A gRPC error as the log quotes it: its code and details."""
    return f"{error.code().name}: {error.details()}"


def _hint(error: grpc.aio.AioRpcError) -> str:
    """What to do about a failure that is retried: about TLS when TLS failed, else start the
    service (the usual cause of an outage is that it was never started)."""
    failure = tls_failure(error.details() or "")
    return START_HINT if failure is None else failure.what


# What a retryable failure may turn into when no retry can help (`retrying`'s `definite`).
Definite = Callable[[grpc.aio.AioRpcError], BridgeError | None]


async def retrying(policy: RetryPolicy, operation: str, attempt: Callable[[], Awaitable[T]],
                   on_retry: Callable[[], Awaitable[None]] | None = None,
                   definite: Definite | None = None) -> T:
    """`await attempt()` until it succeeds, retrying transient failures within the window.

    `on_retry` runs before each new attempt (the service link uses it to open a fresh
    channel, so a restarted server is reached at once instead of after gRPC's own reconnect
    backoff, which grows to minutes). `definite` may name a retryable failure that no retry
    can help with (a certificate the bridge does not trust): its error is raised at once.
    """
    loop = asyncio.get_running_loop()
    deadline: float | None = None
    next_delay = policy.delays()
    while True:
        try:
            result = await attempt()
        except grpc.aio.AioRpcError as error:
            if error.code() not in RETRYABLE:
                raise ServiceRejectedError(operation, error.code().name,
                                           error.details() or "",
                                           error_details(error)) from None
            if definite is not None and (final := definite(error)) is not None:
                raise final from None
            if deadline is None:
                deadline = loop.time() + policy.window
                log.warning("service unreachable (%s); will retry for up to %g s to %s; %s",
                            describe(error), policy.window, operation, _hint(error))
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise ServiceUnavailableError(operation, policy.window, describe(error),
                                              _hint(error)) from None
            await asyncio.sleep(min(next_delay(), remaining))
            if on_retry is not None:
                await on_retry()
        else:
            if deadline is not None:
                log.warning("service reachable again; %s succeeded", operation)
            return result

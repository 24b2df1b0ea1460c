"""Counting every call and timing it, by method and status code, for the metrics.

A separate interceptor from the error and logging one (`interceptor.py`), so the chain's order
is a choice of `app/server.py`. Wherever it stands, it reports the status the caller gets:
outside the error interceptor it sees the status that interceptor set (an abort); inside it,
it sees the use case's error before it is mapped, and maps it the same way (`status_of`).

Labels are bounded: a method is one the server serves, or `unknown` for any other (gRPC
answers those UNIMPLEMENTED itself), a code one of gRPC's. Each (method, code) child is
looked up once and kept.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Histogram

from shellexec.api.call_log import UNKNOWN_METHOD
from shellexec.api.error_details import status_of
from shellexec.api.handlers import rewrapped
from shellexec.service import ServiceError

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]]


def _status(error: BaseException | None, context: grpc.aio.ServicerContext) -> grpc.StatusCode:
    """The status a call ends with: the one set on its context, else what `error` maps to."""
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if error is None:
        return grpc.StatusCode.OK
    if isinstance(error, asyncio.CancelledError):
        return grpc.StatusCode.CANCELLED
    if isinstance(error, ServiceError):
        return status_of(error)
    return grpc.StatusCode.INTERNAL


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts each finished call in `requests` {method, code} and observes its duration in
    `latency` {method}."""

    def __init__(self, requests: Counter, latency: Histogram,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self._requests = requests
        self._latency = latency
        self._clock = clock
        self._counts: dict[tuple[str, grpc.StatusCode], Any] = {}
        self._durations: dict[str, Any] = {}

    async def intercept_service(self, continuation: Continuation,
                                handler_call_details: grpc.HandlerCallDetails
                                ) -> grpc.RpcMethodHandler:
        started = self._clock()
        handler = await continuation(handler_call_details)
        if handler is None:
            self.record(UNKNOWN_METHOD, grpc.StatusCode.UNIMPLEMENTED, self._clock() - started)
            return handler
        return self._wrap(handler, handler_call_details.method)

    def record(self, method: str, code: grpc.StatusCode, seconds: float) -> None:
        count = self._counts.get((method, code))
        if count is None:
            count = self._counts[(method, code)] = self._requests.labels(
                method=method, code=code.name)
        duration = self._durations.get(method)
        if duration is None:
            duration = self._durations[method] = self._latency.labels(method=method)
        count.inc()
        duration.observe(seconds)

    def _wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        return rewrapped(handler, lambda behavior, _: self._unary(behavior, method),
                         lambda behavior, _: self._streaming(behavior, method),
                         handler.request_deserializer)

    def _unary(self, behavior: Callable[..., Any],
               method: str) -> Callable[..., Awaitable[Any]]:
        async def measured(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = self._clock()
            error: BaseException | None = None
            try:
                return await behavior(request, context)
            except BaseException as raised:  # recorded, then raised on unchanged
                error = raised
                raise
            finally:
                self.record(method, _status(error, context), self._clock() - started)

        return measured

    def _streaming(self, behavior: Callable[..., Any], method: str) -> Callable[..., Any]:
        if not inspect.isasyncgenfunction(behavior):  # writes with `context.write`
            return self._unary(behavior, method)

        async def measured(request: Any, context: grpc.aio.ServicerContext
                           ) -> AsyncIterator[Any]:
            started = self._clock()
            error: BaseException | None = None
            try:
                async for response in behavior(request, context):
                    yield response
            except BaseException as raised:  # recorded, then raised on unchanged
                error = raised
                raise
            finally:
                self.record(method, _status(error, context), self._clock() - started)

        return measured

"""The one place where a call's failure becomes its gRPC status (ADR 0043).

`ErrorInterceptor` wraps every method the server serves (the service, health, reflection):
- a request whose bytes do not decode is INVALID_ARGUMENT naming the field to blame (`wire`),
  where gRPC would answer UNKNOWN with the parser's exception;
- a use-case error (`ServiceError`) becomes its status, with its message cut to
  MAX_ERROR_MESSAGE_CHARS so no trailer can grow past what Envoy and gRPC accept;
- anything else is unexpected: one JSON line goes to the log (request id, method, status,
  the exception's type and where it was raised, never its text, which may quote output) and
  the caller gets INTERNAL with only the request id.

The request id is Envoy's `x-request-id` when the call came through it (so Envoy's and the
server's logs meet), otherwise a new one.
"""

from __future__ import annotations

import inspect
import json
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import grpc
from google.protobuf import descriptor_pool, message, message_factory

from shellexec.api import wire
from shellexec.api.validation import REQUEST_ID_PATTERN
from shellexec.rules.limits import MAX_ERROR_MESSAGE_CHARS
from shellexec.service import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ServiceError,
)

_REQUEST_ID_HEADER = "x-request-id"
Metadata = Sequence[tuple[str, str | bytes]]


def status_of(error: ServiceError) -> grpc.StatusCode:
    if isinstance(error, InvalidArgumentError):
        return grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(error, NotFoundError):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(error, FailedPreconditionError):
        return grpc.StatusCode.FAILED_PRECONDITION
    if isinstance(error, PermissionDeniedError):
        return grpc.StatusCode.PERMISSION_DENIED
    return grpc.StatusCode.INTERNAL


def bounded(text: str) -> str:
    """An error message as it may be sent: at most MAX_ERROR_MESSAGE_CHARS characters."""
    if len(text) <= MAX_ERROR_MESSAGE_CHARS:
        return text
    return text[:MAX_ERROR_MESSAGE_CHARS - 1] + "…"


def request_id_of(metadata: Metadata | None) -> str:
    """The caller's (Envoy's) request id when it is a well-formed one, else a new id."""
    for key, value in metadata or ():
        if key == _REQUEST_ID_HEADER and isinstance(value, str) and (
                REQUEST_ID_PATTERN.fullmatch(value)):
            return value
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class _Undecodable:
    """What the request deserializer returns instead of raising: the servicer is not called."""

    culprit: wire.Culprit


def _request_class(method: str) -> type[message.Message] | None:
    """The request message class of `/package.Service/Method`, from the descriptor pool."""
    try:
        found = descriptor_pool.Default().FindMethodByName(method.lstrip("/").replace("/", "."))
    except KeyError:
        return None
    found_class: type[message.Message] = message_factory.GetMessageClass(found.input_type)
    return found_class


def _tolerant(deserializer: Callable[[bytes], Any] | None,
              request_class: type[message.Message] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return deserializer(data)
        except message.DecodeError:
            if request_class is None:
                return _Undecodable(wire.Culprit("request", "is not a valid message"))
            return _Undecodable(wire.culprit(request_class, data))

    return deserialize


def _decoded(request: Any) -> Any:
    if isinstance(request, _Undecodable):
        raise InvalidArgumentError(request.culprit.field, request.culprit.reason)
    return request


async def _decoded_stream(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        yield _decoded(request)


def _origin(error: BaseException) -> str:
    """Where `error` was raised: file, line and function of the innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f"{last.filename}:{last.lineno} in {last.name}"


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    """Maps every call's failure to its status; logs the unexpected ones to `log`."""

    def __init__(self, log: TextIO) -> None:
        self._log = log
        # Method -> its request class, looked up once per method the server serves.
        self._request_classes: dict[str, type[message.Message] | None] = {}

    def request_class(self, method: str) -> type[message.Message] | None:
        if method not in self._request_classes:
            self._request_classes[method] = _request_class(method)
        return self._request_classes[method]

    async def intercept_service(
            self, continuation: Callable[[grpc.HandlerCallDetails],
                                         Awaitable[grpc.RpcMethodHandler]],
            handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        call = _Call(self, handler_call_details.method,
                     handler_call_details.invocation_metadata)
        return call.wrap(handler)

    def report(self, method: str, request_id: str, error: BaseException) -> None:
        line = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "event": "unexpected_error", "request_id": request_id, "method": method,
                "status": grpc.StatusCode.INTERNAL.name, "error": type(error).__name__,
                "origin": _origin(error)}
        self._log.write(json.dumps(line) + "\n")
        self._log.flush()


class _Call:
    """One call's handler wrapped: decoding checked, failures mapped."""

    def __init__(self, interceptor: ErrorInterceptor, method: str,
                 metadata: Metadata | None) -> None:
        self._interceptor = interceptor
        self._method = method
        self._metadata = metadata

    def wrap(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        deserializer = _tolerant(handler.request_deserializer,
                                 self._interceptor.request_class(self._method))
        serializer = handler.response_serializer
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, _decoded), deserializer, serializer)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._unary(handler.stream_unary, _decoded_stream), deserializer, serializer)
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(handler.unary_stream, _decoded), deserializer, serializer)
        return grpc.stream_stream_rpc_method_handler(
            self._streaming(handler.stream_stream, _decoded_stream), deserializer, serializer)

    async def _fail(self, error: Exception, context: grpc.aio.ServicerContext) -> None:
        """Ends the call with the status `error` stands for; raises (as `abort` does)."""
        if isinstance(error, ServiceError):
            await context.abort(status_of(error), bounded(str(error)))
        request_id = request_id_of(self._metadata)
        self._interceptor.report(self._method, request_id, error)
        await context.abort(grpc.StatusCode.INTERNAL, f"internal error; request id {request_id}")

    def _unary(self, behavior: Callable[..., Any],
               check: Callable[[Any], Any]) -> Callable[..., Awaitable[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            try:
                return await behavior(check(request), context)
            except grpc.aio.AbortError:
                raise
            except Exception as error:  # every failure gets its status here
                await self._fail(error, context)

        return guarded

    def _streaming(self, behavior: Callable[..., Any],
                   check: Callable[[Any], Any]) -> Callable[..., Any]:
        if not inspect.isasyncgenfunction(behavior):  # writes with `context.write`
            return self._unary(behavior, check)

        async def guarded(request: Any, context: grpc.aio.ServicerContext
                          ) -> AsyncIterator[Any]:
            try:
                async for response in behavior(check(request), context):
                    yield response
            except grpc.aio.AbortError:
                raise
            except Exception as error:  # every failure gets its status here
                await self._fail(error, context)

        return guarded

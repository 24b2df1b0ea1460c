"""The one place where every call is logged and its failure becomes its gRPC status (ADRs
0043, 0060).

`ErrorInterceptor` wraps every method the server serves (the service, health, reflection):
- a request whose bytes do not decode is INVALID_ARGUMENT naming the field to blame (`wire`),
  where gRPC would answer UNKNOWN with the parser's exception;
- a use-case error (`ServiceError`) becomes its status, with its message cut to
  MAX_ERROR_MESSAGE_CHARS so no trailer can grow past what Envoy and gRPC accept, and its
  google.rpc details (`error_details`);
- anything else is unexpected: the caller gets INTERNAL with only the request id;
- every call, when it ends, leaves one JSON line in the call log (`call_log`): its request id,
  method, status, duration and session; an unexpected failure adds the exception's type and
  where it was raised, never its text, which may quote output.

The request id is Envoy's `x-request-id` when the call came through it (so Envoy's and the
server's logs meet), otherwise a new one.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import message, message_factory

# What `context.write` raises once the caller is gone; grpc exports it from no public module.
from grpc._cython.cygrpc import ExecuteBatchError

from shellexec.api import wire
from shellexec.api.call_log import UNKNOWN_METHOD, CallLog, CallRecord
from shellexec.api.error_details import STATUS_DETAILS_KEY, rpc_status
from shellexec.api.handlers import close_stream, method_descriptor, rewrapped, when_call_ends
from shellexec.api.validation import REQUEST_ID_PATTERN, SESSION_ID_PATTERN
from shellexec.service import InvalidArgumentError, ServiceError, UnavailableError
from shellexec.store import DatabaseUnavailableError
from shellexec.vocabulary import RESOURCE_SESSION

_REQUEST_ID_HEADER = "x-request-id"
# The request field that names the session a call is about, and the response field that
# holds a session the call created.
_SESSION_ID_FIELD = "session_id"
_SESSION_FIELD = "session"
Metadata = Sequence[tuple[str, str | bytes]]


def request_id_of(metadata: Metadata | None) -> str:
    """The caller's (Envoy's) request id when it is a well-formed one, else a new id."""
    for key, value in metadata or ():
        if key == _REQUEST_ID_HEADER and isinstance(value, str) and (
                REQUEST_ID_PATTERN.fullmatch(value)):
            return value
    return os.urandom(16).hex()  # as random as uuid4().hex, in a sixth of the time


@dataclass(frozen=True, slots=True)
class _Undecodable:
    """What the request deserializer returns instead of raising: the servicer is not called."""

    culprit: wire.Culprit


@dataclass(frozen=True, slots=True)
class _MethodShape:
    """What the interceptor needs to know of a method, looked up once per method."""

    request_class: type[message.Message] | None
    request_names_session: bool
    response_holds_session: bool


def _method_shape(method: str) -> _MethodShape:
    """The request class of `/package.Service/Method` and where its session id is, from the
    descriptor pool."""
    found = method_descriptor(method)
    if found is None:
        return _MethodShape(None, False, False)
    request_class: type[message.Message] = message_factory.GetMessageClass(found.input_type)
    session = found.output_type.fields_by_name.get(_SESSION_FIELD)
    return _MethodShape(
        request_class, _SESSION_ID_FIELD in found.input_type.fields_by_name,
        session is not None and session.message_type is not None
        and session.message_type.full_name == RESOURCE_SESSION)


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


def _origin(error: BaseException) -> str:
    """Where `error` was raised: file, line and function of the innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f"{last.filename}:{last.lineno} in {last.name}"


def _known_session(session_id: object) -> str:
    """`session_id` if it is of the server's form (nothing else a caller sent is logged)."""
    if isinstance(session_id, str) and SESSION_ID_PATTERN.fullmatch(session_id):
        return session_id
    return ""


def _code_set(context: grpc.aio.ServicerContext) -> grpc.StatusCode:
    """The code a handler set or aborted with itself, OK when none (grpc.aio may report it
    as a number)."""
    code = context.code()
    if code is None or isinstance(code, grpc.StatusCode):
        return code or grpc.StatusCode.OK
    for status in grpc.StatusCode:
        if status.value[0] == code:
            return status
    return grpc.StatusCode.UNKNOWN


async def _abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, details: str,
                 trailing_metadata: Metadata = ()) -> None:
    """`context.abort`, whose exception lets go of the call's request once the call is over.

    gRPC keeps an abort's exception on the call's state, which the frames of its traceback
    (and of the error it was raised for) refer back to, through `context`. Only the garbage
    collector's full passes free such cycles, so without this, the request of every aborted
    call stayed in memory until the next full pass: 300 refused calls of 15 MB held 4 GB. The
    frames can be cleared only once none of them runs, so when the call's task ends (ADR
    0140)."""
    try:
        await context.abort(code, details, trailing_metadata)
    except grpc.aio.AbortError as aborted:
        when_call_ends(functools.partial(_clear_frames, aborted))
        raise


def _clear_frames(error: BaseException | None) -> None:
    """Clears the locals of the frames in `error`'s traceback and in those it was raised
    while handling, down the chain."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    """Maps every call's failure to its status and writes every call to `log`."""

    def __init__(self, log: CallLog) -> None:
        self._log = log
        # Method -> what is needed of it, looked up once per method the server serves.
        self._shapes: dict[str, _MethodShape] = {}

    def shape(self, method: str) -> _MethodShape:
        if method not in self._shapes:
            self._shapes[method] = _method_shape(method)
        return self._shapes[method]

    async def intercept_service(
            self, continuation: Callable[[grpc.HandlerCallDetails],
                                         Awaitable[grpc.RpcMethodHandler]],
            handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        started = time.time()
        clock = time.perf_counter()
        handler = await continuation(handler_call_details)
        request_id = request_id_of(handler_call_details.invocation_metadata)
        if handler is None:  # gRPC answers UNIMPLEMENTED; the log still has the call
            if self._log.wants(grpc.StatusCode.UNIMPLEMENTED):
                self._log.write(CallRecord(
                    started, request_id, UNKNOWN_METHOD, grpc.StatusCode.UNIMPLEMENTED,
                    (time.perf_counter() - clock) * 1000))
            return handler
        method = handler_call_details.method
        call = _Call(self._log, method, self.shape(method), request_id, started, clock)
        return call.wrap(handler)


class _Call:
    """One call's handler wrapped: decoding checked, failures mapped, the call logged."""

    def __init__(self, log: CallLog, method: str, shape: _MethodShape, request_id: str,
                 started: float, clock: float) -> None:
        self._log = log
        self._method = method
        self._shape = shape
        self._request_id = request_id
        self._started = started
        self._clock = clock
        self._status = grpc.StatusCode.OK
        self._session_id = ""
        self._unexpected: Exception | None = None
        self._finished = False

    def wrap(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        def check(streamed_requests: bool) -> Callable[[Any], Any]:
            return self._decoded_stream if streamed_requests else _decoded

        return rewrapped(
            handler, lambda behavior, streamed: self._unary(behavior, check(streamed)),
            lambda behavior, streamed: self._streaming(behavior, check(streamed)),
            _tolerant(handler.request_deserializer, self._shape.request_class))

    async def _decoded_stream(self, requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """The requests of a stream, each checked and noted as it arrives: the request
        budget takes every method's single request as a stream (`request_budget`)."""
        iterator = aiter(requests)
        try:
            async for request in iterator:
                request = _decoded(request)
                self._note_request(request)
                yield request
        finally:
            await close_stream(iterator)

    def _note_request(self, request: Any) -> None:
        if not self._shape.request_names_session:
            return
        if isinstance(request, message.Message):
            self._session_id = _known_session(getattr(request, _SESSION_ID_FIELD))
        elif isinstance(request, bytes) and self._shape.request_class is not None:
            # A method that parses its own request (`handlers.RAW_METHODS`): read only the
            # session id, without decoding the (possibly large) rest on the event loop.
            self._session_id = _known_session(
                wire.string_field(self._shape.request_class, request, _SESSION_ID_FIELD))

    def _note_response(self, response: Any) -> None:
        if self._shape.response_holds_session and isinstance(response, message.Message):
            self._session_id = _known_session(getattr(response, _SESSION_FIELD).id)

    async def _fail(self, error: Exception, context: grpc.aio.ServicerContext) -> None:
        """Ends the call with the status `error` stands for; raises (as `abort` does).

        The call is logged first: the caller may hear the status before `abort` returns."""
        if isinstance(error, DatabaseUnavailableError):  # expected: the cure is a retry
            error = UnavailableError(str(error))
        if isinstance(error, ServiceError):
            code, text, details = rpc_status(error)
            self._status = code
            self._finish()
            await _abort(context, code, text, ((STATUS_DETAILS_KEY, details),))
        if isinstance(error, ExecuteBatchError):
            # A write to a caller (or a front door) that went away before grpc had told this
            # call: the call was cancelled, nothing of ours broke.
            self._status = grpc.StatusCode.CANCELLED
            self._finish()
            raise asyncio.CancelledError from error
        self._status = grpc.StatusCode.INTERNAL
        self._unexpected = error
        self._finish()
        self._unexpected = None  # its traceback holds the request: let both go with the call
        await _abort(context, grpc.StatusCode.INTERNAL,
                     f"internal error; request id {self._request_id}")

    def _ended(self, error: BaseException, context: grpc.aio.ServicerContext) -> None:
        """Notes the status of a call that ended by `error` without passing `_fail`."""
        if isinstance(error, grpc.aio.AbortError):
            if self._status == grpc.StatusCode.OK:  # the handler aborted by itself
                self._status = _code_set(context)
        elif isinstance(error, (asyncio.CancelledError, GeneratorExit)):
            self._status = grpc.StatusCode.CANCELLED

    def _finish(self) -> None:
        """Logs the call, once."""
        if self._finished:
            return
        self._finished = True
        if not self._log.wants(self._status):
            return
        unexpected = self._unexpected
        self._log.write(CallRecord(
            self._started, self._request_id, self._method, self._status,
            (time.perf_counter() - self._clock) * 1000, self._session_id,
            "" if unexpected is None else type(unexpected).__name__,
            "" if unexpected is None else _origin(unexpected)))

    def _unary(self, behavior: Callable[..., Any],
               check: Callable[[Any], Any]) -> Callable[..., Awaitable[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            self._note_request(request)
            try:
                response = await behavior(check(request), context)
                self._note_response(response)
                self._status = _code_set(context)
                return response
            except (grpc.aio.AbortError, asyncio.CancelledError) as error:
                self._ended(error, context)
                raise
            except Exception as error:  # every failure gets its status here
                await self._fail(error, context)
            finally:
                self._finish()

        return guarded

    def _streaming(self, behavior: Callable[..., Any],
                   check: Callable[[Any], Any]) -> Callable[..., Any]:
        if not inspect.isasyncgenfunction(behavior):  # writes with `context.write`
            return self._unary(behavior, check)

        async def guarded(request: Any, context: grpc.aio.ServicerContext
                          ) -> AsyncIterator[Any]:
            self._note_request(request)
            try:
                async for response in behavior(check(request), context):
                    yield response
                self._status = _code_set(context)
            except (grpc.aio.AbortError, asyncio.CancelledError, GeneratorExit) as error:
                self._ended(error, context)
                raise
            except Exception as error:  # every failure gets its status here
                await self._fail(error, context)
            finally:
                self._finish()

        return guarded

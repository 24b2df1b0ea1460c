"""The one place calls are authenticated: a gRPC server interceptor.

Direct gRPC, gRPC-Web and REST (Envoy's transcoder forwards the `authorization` header as
metadata) all pass through it. It finds the caller a bearer token names, checks the scope the
method needs, and hands the caller to the servicer through `current_caller`; the use cases then
check the caller's task patterns (ADR 0050). A refused call never reaches the servicer, and its
request is not even read (ADR 0140). The caller is also left in the call's context for the
interceptors before this one, which act after it (the request budget).
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import grpc

from shellexec.api.handlers import refusal
from shellexec.service import NOBODY, UNRESTRICTED, Caller
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.vocabulary import SCOPE_ADMIN, SCOPE_INGEST, SCOPE_READ, Scope

_SERVICE = pb.DESCRIPTOR.services_by_name["ShellExecService"]
# The path prefix of every ShellExecService method (gRPC, gRPC-Web and Connect alike).
SERVICE_PREFIX = f"/{_SERVICE.full_name}/"
# Any valid token will do (the stateless calls read and store nothing).
ANY_TOKEN: frozenset[Scope] = frozenset()
_INGEST = frozenset({SCOPE_INGEST})
_READ = frozenset({SCOPE_READ})
_ADMIN_ONLY: frozenset[Scope] = frozenset({SCOPE_ADMIN})

# Method -> the scopes of which one is needed; `admin` grants them all. A method missing here
# needs `admin` (a new method is closed until it is placed). Other services (health,
# reflection: the schema is public) are open.
METHOD_SCOPES: Mapping[str, frozenset[Scope]] = {
    "NormalizeShellExec": ANY_TOKEN,
    "SummarizeShellOutput": ANY_TOKEN,
    "CreateSession": _INGEST,
    "StartTurn": _INGEST,
    "PublishUpdate": _INGEST,
    "CompleteTurn": _INGEST,
    # A writer reads its own session back (the bridge adopts a turn whose answer was lost).
    "GetSession": _READ | _INGEST,
    "ListSessions": _READ,
    "ListMessages": _READ,
    "GetShellOutput": _READ,
    "WatchMessages": _READ,
    "GetBootState": _READ,
    "DeleteSession": _ADMIN_ONLY,
    "DeleteTask": _ADMIN_ONLY,
}

_CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("shellexec_caller",
                                                                 default=NOBODY)

MISSING_TOKEN = ("this service requires a bearer token: send the header "
                 "`authorization: Bearer <token>` (create one with `shellexec token create`)")
UNKNOWN_TOKEN = "the bearer token is unknown or revoked"


def current_caller() -> Caller:
    """The caller of the call being served; NOBODY (no scope, no task) outside an
    authenticated call."""
    return _CALLER.get()


class TokenLookup(Protocol):
    def __call__(self, secret: str) -> Awaitable[Caller | None]: ...


def bearer_token(metadata: Sequence[tuple[str, str | bytes]] | None) -> str | None:
    """The token of an `authorization: Bearer ...` header, or None when there is none."""
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return None


def _required_scopes(method: str) -> frozenset[Scope] | None:
    """The scopes a method needs; None for a method of another service (open)."""
    if not method.startswith(SERVICE_PREFIX):
        return None
    return METHOD_SCOPES.get(method[len(SERVICE_PREFIX):], _ADMIN_ONLY)


def _as(handler: grpc.RpcMethodHandler, caller: Caller) -> grpc.RpcMethodHandler:
    """The handler, run with `caller` as the current caller (each call runs in a task of its
    own, so setting the context variable affects that call only)."""
    if handler.response_streaming:
        serve_stream = handler.unary_stream
        if not inspect.isasyncgenfunction(serve_stream):  # it writes with `context.write`
            async def writing(request: Any, context: grpc.aio.ServicerContext) -> None:
                _CALLER.set(caller)
                await serve_stream(request, context)

            return grpc.unary_stream_rpc_method_handler(
                writing, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            _CALLER.set(caller)
            async for response in serve_stream(request, context):
                yield response

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer)
    serve = handler.unary_unary

    async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
        _CALLER.set(caller)
        return await serve(request, context)

    return grpc.unary_unary_rpc_method_handler(
        unary, request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer)


class Authenticator(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc is untyped
    """Authenticates every call of ShellExecService; `lookup` is None when authentication
    is off (loopback only), and every caller is then UNRESTRICTED."""

    def __init__(self, lookup: TokenLookup | None) -> None:
        self._lookup = lookup

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails],
                                     Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        required = _required_scopes(handler_call_details.method)
        if handler is None or required is None:
            return handler
        if self._lookup is None:
            _CALLER.set(UNRESTRICTED)
            return _as(handler, UNRESTRICTED)
        secret = bearer_token(handler_call_details.invocation_metadata)
        if secret is None:
            return refusal(handler, grpc.StatusCode.UNAUTHENTICATED, MISSING_TOKEN)
        caller = await self._lookup(secret)
        if caller is None:
            return refusal(handler, grpc.StatusCode.UNAUTHENTICATED, UNKNOWN_TOKEN)
        if required and not caller.has_any(required):
            method = handler_call_details.method[len(SERVICE_PREFIX):]
            return refusal(handler, grpc.StatusCode.PERMISSION_DENIED,
                           f"token {caller.name!r} may not call {method}: it needs the scope "
                           f"{' or '.join(sorted(required))}")
        # For the interceptors before this one, which act after it (the request budget).
        _CALLER.set(caller)
        return _as(handler, caller)

"""The one place calls are authenticated: a gRPC server interceptor.

Direct gRPC, gRPC-Web and REST (Envoy's transcoder forwards the `authorization` header as
metadata) all pass through it. It finds the caller a bearer token names, checks the scope the
method needs, and hands the caller to the servicer through `current_caller`; the use cases then
check the caller's task patterns (ADR 0050). A refused call never reaches the servicer, and its
request is not even read (ADR 0140); its status carries an `ErrorInfo` whose reason says why
(TOKEN_MISSING, TOKEN_UNKNOWN, SCOPE_MISSING), as the front door's token check's does. The
caller is set for the whole call, so the interceptors before this one, which act after it (the
request budget), know it too.
"""

from __future__ import annotations

import contextvars
import hmac
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol

import grpc

from shellexec.api.error_details import STATUS_DETAILS_KEY, refusal_status
from shellexec.api.handlers import failing, refusal, when_call_ends
from shellexec.rules.limits import MAX_TOKENLESS_CALLS
from shellexec.service import NOBODY, UNRESTRICTED, Caller
from shellexec.store import DatabaseUnavailableError
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.vocabulary import (
    REASON_SCOPE_MISSING,
    REASON_TOKEN_MISSING,
    REASON_TOKEN_UNKNOWN,
    SCOPE_ADMIN,
    SCOPE_INGEST,
    SCOPE_READ,
    ErrorReason,
    Scope,
)

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
TOKENLESS_CALLS_FULL = (
    f"the server already runs {MAX_TOKENLESS_CALLS} streams without a valid token (health "
    "watches and reflection), the most it may at once: try again once one has ended, or send "
    "a bearer token")


def current_caller() -> Caller:
    """The caller of the call being served; NOBODY (no scope, no task) outside an
    authenticated call."""
    return _CALLER.get()


class TokenLookup(Protocol):
    def __call__(self, secret: str) -> Awaitable[Caller | None]: ...


class CallerLookup(Protocol):
    """The caller of a call's token; `ticket` is the front door's check of it, if any
    (`checked_tokens`)."""

    def __call__(self, secret: str, ticket: str | None) -> Awaitable[Caller | None]: ...


# The request header that carries the front door's token check to the call it admitted.
TICKET_HEADER = "x-shellexec-ticket"
# The request header of the front door's own health checks of the replicas, carrying the
# secret they share (SHELLEXEC_PROBE_SECRET); clients' requests lose it at the front door.
PROBE_HEADER = "x-shellexec-probe"
# The caller of those health checks: a name no token has (token names have no space), so a
# refusal of the request budget can say whose calls they are.
FRONT_DOOR_PROBE = Caller("front door's own health checks", frozenset())
# The request header the front door adds, with the same secret, to the health checks its
# clients send through it: their caller is FRONT_DOOR_CHECKS, a line of their own.
FRONT_DOOR_CHECK_HEADER = "x-shellexec-front-door"
FRONT_DOOR_CHECKS = Caller("front door's clients' health checks", frozenset())


def bearer_token(metadata: Sequence[tuple[str, str | bytes]] | None) -> str | None:
    """The token of an `authorization: Bearer ...` header, or None when there is none."""
    value = _header(metadata, "authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _header(metadata: Sequence[tuple[str, str | bytes]] | None, name: str) -> str | None:
    """The first text value of the header `name`, or None."""
    for key, value in metadata or ():
        if key == name and isinstance(value, str):
            return value
    return None


def _required_scopes(method: str) -> frozenset[Scope] | None:
    """The scopes a method needs; None for a method of another service (open)."""
    if not method.startswith(SERVICE_PREFIX):
        return None
    return METHOD_SCOPES.get(method[len(SERVICE_PREFIX):], _ADMIN_ONLY)


class Authenticator(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc is untyped
    """Authenticates every call of ShellExecService; `lookup` is None when authentication
    is off (loopback only), and every caller is then UNRESTRICTED.

    With authentication on, a call of an open service (health, reflection) is the front
    door's probe's, or the front door's clients' health check, when it carries `probe_secret`
    in the header of either; a stream of theirs is its token's when it
    carries a valid one, and the server runs at most `max_tokenless_calls` of the other
    streams at once: they are one caller, anyone who reaches the port."""

    def __init__(self, lookup: CallerLookup | None,
                 max_tokenless_calls: int = MAX_TOKENLESS_CALLS,
                 probe_secret: str = "") -> None:
        self._lookup = lookup
        self._max_tokenless_calls = max_tokenless_calls
        self._probe_secret = probe_secret.encode()
        self.tokenless_calls = 0

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails],
                                     Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        required = _required_scopes(handler_call_details.method)
        if handler is None or self._lookup is None:
            if handler is not None and required is not None:
                _CALLER.set(UNRESTRICTED)  # see below
            return handler
        if required is None:
            return await self._open(handler, handler_call_details.invocation_metadata)
        metadata = handler_call_details.invocation_metadata
        secret = bearer_token(metadata)
        if secret is None:
            return token_refusal(handler, grpc.StatusCode.UNAUTHENTICATED, MISSING_TOKEN,
                                 REASON_TOKEN_MISSING)
        try:
            caller = await self._lookup(secret, _header(metadata, TICKET_HEADER))
        except Exception as error:
            # Raised here, before the handler the error interceptor wraps, gRPC said UNKNOWN,
            # named our exception's class, and logged and counted nothing (a bridge does not
            # retry UNKNOWN). In the handler it is answered as any failure: an unavailable
            # database UNAVAILABLE, anything else INTERNAL with the request id.
            return failing(handler, error)
        if caller is None:
            return token_refusal(handler, grpc.StatusCode.UNAUTHENTICATED, UNKNOWN_TOKEN,
                                 REASON_TOKEN_UNKNOWN)
        if required and not caller.has_any(required):
            method = handler_call_details.method[len(SERVICE_PREFIX):]
            return token_refusal(handler, grpc.StatusCode.PERMISSION_DENIED,
                                 f"token {caller.name!r} may not call {method}: it needs the "
                                 f"scope {' or '.join(sorted(required))}", REASON_SCOPE_MISSING)
        # Each call runs in a task of its own, and its handler in the same task as this: the
        # caller set here is the call's alone, for the servicer and for the interceptors
        # before this one, which act after it (the request budget).
        _CALLER.set(caller)
        return handler

    async def _open(self, handler: grpc.RpcMethodHandler,
                    metadata: Sequence[tuple[str, str | bytes]] | None
                    ) -> grpc.RpcMethodHandler:
        """A call of an open service. A single call (a health check) looks nothing up and is
        not counted: a probe's liveness must not wait on the database, and a flood of checks
        through the front door, which needs no token, must not get the probes refused (its
        line of the request budget is the tokenless one, bounded there, or the front door
        probe's). A stream (a health watch, reflection) is its token's when it has a valid
        one, else counted among the tokenless streams, past their bound refused without
        reading it."""
        if carries_secret(metadata, PROBE_HEADER, self._probe_secret):
            _CALLER.set(FRONT_DOOR_PROBE)
            return handler
        if carries_secret(metadata, FRONT_DOOR_CHECK_HEADER, self._probe_secret):
            _CALLER.set(FRONT_DOOR_CHECKS)
            return handler
        if not (handler.request_streaming or handler.response_streaming):
            return handler
        secret = bearer_token(metadata)
        if secret:
            assert self._lookup is not None
            try:
                caller = await self._lookup(secret, _header(metadata, TICKET_HEADER))
            except DatabaseUnavailableError:
                caller = None  # served as a tokenless stream
            except Exception as error:  # as in `intercept_service`
                return failing(handler, error)
            if caller is not None:
                _CALLER.set(caller)
                return handler
        if self.tokenless_calls >= self._max_tokenless_calls:
            return refusal(handler, grpc.StatusCode.RESOURCE_EXHAUSTED, TOKENLESS_CALLS_FULL)
        self.tokenless_calls += 1
        when_call_ends(self._tokenless_call_ended)
        return handler

    def _tokenless_call_ended(self) -> None:
        self.tokenless_calls -= 1


def token_refusal(handler: grpc.RpcMethodHandler, code: grpc.StatusCode, message: str,
                  reason: ErrorReason) -> grpc.RpcMethodHandler:
    """A handler refusing the call for its token (`refusal`), with the `ErrorInfo` of
    `reason` in its details (docs/api.md, "Error reasons")."""
    return refusal(handler, code, message,
                   ((STATUS_DETAILS_KEY, refusal_status(code, message, reason)),))


def carries_secret(metadata: Sequence[tuple[str, str | bytes]] | None, header: str,
                   secret: bytes) -> bool:
    """Whether the header `header` holds `secret` (compared in constant time); never when
    there is no secret."""
    value = _header(metadata, header)
    return bool(secret) and value is not None and hmac.compare_digest(value.encode(), secret)

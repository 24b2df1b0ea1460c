"""Sending a bearer token with every call: a channel interceptor for each client, so no
method can forget it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import grpc


def _header(token: str) -> tuple[str, str]:
    return ("authorization", f"Bearer {token}")


class _Details(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: bool | None
    compression: Any


class _CallDetails(_Details, grpc.ClientCallDetails):  # type: ignore[misc]  # grpc is untyped
    """The blocking channel's call details with the token added (they are read-only)."""


class BearerToken(grpc.UnaryUnaryClientInterceptor,  # type: ignore[misc]
                  grpc.UnaryStreamClientInterceptor):  # type: ignore[misc]
    """Adds `authorization: Bearer <token>` to each call of a blocking channel."""

    def __init__(self, token: str) -> None:
        self._header = _header(token)

    def _details(self, details: Any) -> _CallDetails:
        return _CallDetails(details.method, details.timeout,
                            (*(details.metadata or ()), self._header), details.credentials,
                            details.wait_for_ready, details.compression)

    def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any,
                              request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any,
                               request: Any) -> Any:
        return continuation(self._details(details), request)


class _AsyncToken:
    def __init__(self, token: str) -> None:
        self._header = _header(token)

    def _details(self, details: Any) -> Any:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), self._header)
        return grpc.aio.ClientCallDetails(details.method, details.timeout, metadata,
                                          details.credentials, details.wait_for_ready)


class _AsyncUnaryToken(_AsyncToken, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any,
                                    request: Any) -> Any:
        return await continuation(self._details(details), request)


class _AsyncStreamToken(_AsyncToken, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any,
                                     request: Any) -> Any:
        return await continuation(self._details(details), request)


def async_bearer_token(token: str) -> tuple[Any, ...]:
    """Interceptors adding `authorization: Bearer <token>` to each call of an asyncio channel:
    one per kind of call, since an asyncio channel files each interceptor under one kind."""
    return (_AsyncUnaryToken(token), _AsyncStreamToken(token))

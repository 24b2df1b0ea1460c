"""Sending a bearer token with every call: a channel interceptor for each client, so no
method can forget it; and the token checked when the client is made."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

import grpc

# The longest bearer token the service takes (docs/api.md, "Limits"). The client installs
# without the server, so it cannot read shellexec.rules.limits; tests/clients holds the two
# equal, and `token_problem` word for word the bridge's.
MAX_BEARER_TOKEN_CHARS: Final = 256
# The characters a bearer token may hold: visible ASCII, as an HTTP header value can carry it.
_TOKEN_CHARS: Final = frozenset(chr(code) for code in range(0x21, 0x7F))
_NAMED_CHARACTERS: Final = {"\r": "a carriage return", "\n": "a line feed", "\t": "a tab",
                            " ": "a space", "\0": "a NUL byte"}


def token_problem(token: str) -> str | None:
    """What is wrong with a bearer token (never the token itself), or None: a token is at
    most MAX_BEARER_TOKEN_CHARS visible ASCII characters (docs/api.md, "Limits")."""
    for index, character in enumerate(token):
        if character in _TOKEN_CHARS:
            continue
        name = _NAMED_CHARACTERS.get(character)
        if name is None:
            name = ("a control character" if character.isascii()
                    else "a character outside ASCII")
        if index == len(token) - 1:
            return f"ends with {name}"
        return f"holds {name} (character {index + 1} of {len(token)})"
    if len(token) > MAX_BEARER_TOKEN_CHARS:
        return (f"is {len(token)} characters long; the service takes at most "
                f"{MAX_BEARER_TOKEN_CHARS}")
    return None


def check_token(token: str) -> None:
    """ValueError, saying what is wrong and never what the token is, when `token` cannot be
    sent: a header cannot carry a line feed read with it from a file, or a character outside
    ASCII, which failed every call (INTERNAL "Invalid metadata" in the blocking client, an
    error that was no grpc.RpcError in the asyncio one)."""
    problem = token_problem(token)
    if problem is not None:
        raise ValueError(f"token {problem}: a token is at most {MAX_BEARER_TOKEN_CHARS} "
                         "visible ASCII characters")


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

"""The path names the resource, checked by the server too (ADRs 0044 and 0146).

Envoy's transcoder fills a REST call's request from its path, its query and its body, and the
query or the body can name a path-bound field again. The front door refuses the plain cases
(`?session_id=B`, a body field with another value), but the transcoder also takes a field by
its JSON name (`?sessionId=B`), by a percent-encoded name (`?session%5Fid=B`), and from a body
that gives a key twice (its collision check reads the first, the parser keeps the last). Any of
these made `DELETE /api/v1/task-sessions/A` delete session B.

The transcoder passes the path it transcoded to the server as `x-envoy-original-path`. This
interceptor reads the fields the path binds from it and refuses, with INVALID_ARGUMENT naming
the field, a call whose request names anything else. Calls without that header (native gRPC,
gRPC-Web, Connect) have no path to compare with and pass as they are: a client that sends the
header itself can only have its own calls refused.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

import grpc
from google.protobuf import message, message_factory

from shellexec.api import wire
from shellexec.api.handlers import method_descriptor, rewrapped
from shellexec.api.interceptor import Metadata
from shellexec.service import InvalidArgumentError

ORIGINAL_PATH_HEADER = "x-envoy-original-path"
# What the transcoder leaves escaped in a path variable (RFC 6570's reserved characters, its
# default `url_unescape_spec`): `%2F` stays `%2F`.
_RESERVED_ESCAPE = re.compile(r"(%(?:2[1346-9A-Ca-cFf]|3[ABDFabdf]|40|5[BDbd]))")

# A gRPC method (`/package.Service/Method`) -> the path templates that call it, each a regex
# with a named group per request field the path binds (`rest_bindings`' `fields_regex`).
PathPatterns = Mapping[str, Sequence[re.Pattern[str]]]


def _original_path(metadata: Metadata | None) -> str | None:
    for key, value in metadata or ():
        if key == ORIGINAL_PATH_HEADER and isinstance(value, str):
            return value
    return None


def _spellings(segment: str) -> frozenset[str]:
    """What the transcoder may have made of a path segment: it as sent, unescaped but for
    reserved characters (the transcoder's default), and unescaped whole."""
    partly = "".join(piece if _RESERVED_ESCAPE.fullmatch(piece) else unquote(piece)
                     for piece in _RESERVED_ESCAPE.split(segment))
    return frozenset((segment, partly, unquote(segment)))


def path_fields(patterns: Sequence[re.Pattern[str]], path: str) -> dict[str, str] | None:
    """The fields `path` (its query left out) binds, by the first template it matches, each
    with the segment as sent; None when it matches none."""
    bare = path.partition("?")[0]
    for pattern in patterns:
        found = pattern.match(bare)
        if found is not None:
            return found.groupdict()
    return None


class PathBindingInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Refuses a transcoded call whose request names another resource than its path."""

    def __init__(self, patterns: PathPatterns) -> None:
        self._patterns = patterns
        self._request_classes = {method: _request_class(method) for method in patterns}

    async def intercept_service(
            self, continuation: Callable[[grpc.HandlerCallDetails],
                                         Awaitable[grpc.RpcMethodHandler | None]],
            handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        patterns = self._patterns.get(handler_call_details.method)
        if handler is None or not patterns:
            return handler
        path = _original_path(handler_call_details.invocation_metadata)
        fields = None if path is None else path_fields(patterns, path)
        if not fields:
            return handler
        check = _Check(self._request_classes[handler_call_details.method], fields)
        return rewrapped(handler, check.wrap, check.wrap, handler.request_deserializer)


def _request_class(method: str) -> type[message.Message]:
    found = method_descriptor(method)
    if found is None:
        raise ValueError(f"{method} is no method of a loaded service")
    request_class: type[message.Message] = message_factory.GetMessageClass(found.input_type)
    return request_class


class _Check:
    """One call's path-bound fields, compared with its request before its handler runs."""

    def __init__(self, request_class: type[message.Message], fields: dict[str, str]) -> None:
        self._request_class = request_class
        self._fields = fields

    def _value(self, request: Any, field: str) -> str:
        if isinstance(request, message.Message):
            return str(getattr(request, field))
        # A method that parses its own request (`handlers.RAW_METHODS`): that field alone.
        return wire.string_field(self._request_class, request, field) or ""

    def _verify(self, request: Any) -> None:
        for field, segment in self._fields.items():
            if self._value(request, field) not in _spellings(segment):
                raise InvalidArgumentError(
                    field, "is named by the path; the query or the body names another")

    def wrap(self, behavior: Callable[..., Any], streamed: bool) -> Callable[..., Any]:
        """`behavior`, run only once its request names what the path names."""
        if streamed:  # no method with a REST binding takes a request stream
            return behavior
        if inspect.isasyncgenfunction(behavior):
            async def checked_stream(request: Any, context: grpc.aio.ServicerContext
                                     ) -> AsyncIterator[Any]:
                self._verify(request)
                async for response in behavior(request, context):
                    yield response

            return checked_stream

        async def checked(request: Any, context: grpc.aio.ServicerContext) -> Any:
            self._verify(request)  # also for a method that writes with `context.write`
            return await behavior(request, context)

        return checked

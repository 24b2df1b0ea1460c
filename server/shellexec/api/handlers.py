"""The service's gRPC method handlers, built from its descriptor.

Every method gets the generated message types as its (de)serializers, except RAW_METHODS:
grpc.aio parses a request on the event loop before the servicer runs, so the methods whose
requests can be large take and answer bytes and parse them where `offload` decides.

The interceptors build on the same shapes: `rewrapped` wraps a handler's behaviour, `refusal`
answers a call without reading its request, and `when_call_ends` runs a callback once a call
is over, however it ended; `close_stream` closes a request stream's generators.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

import grpc
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import MethodDescriptor

from shellexec.v1 import shell_exec_service_pb2 as pb

RAW_METHODS = frozenset({"NormalizeShellExec", "PublishUpdate"})
_SERVICE = pb.DESCRIPTOR.services_by_name["ShellExecService"]


def method_handlers(servicer: Any) -> dict[str, grpc.RpcMethodHandler]:
    """Each method of ShellExecService -> its handler on `servicer`."""
    handlers = {}
    for method in _SERVICE.methods:
        behaviour = getattr(servicer, method.name)
        if method.name in RAW_METHODS:
            parse, serialize = None, None
        else:
            parse = message_factory.GetMessageClass(method.input_type).FromString
            serialize = message_factory.GetMessageClass(method.output_type).SerializeToString
        factory = (grpc.unary_stream_rpc_method_handler if method.server_streaming
                   else grpc.unary_unary_rpc_method_handler)
        handlers[method.name] = factory(behaviour, request_deserializer=parse,
                                        response_serializer=serialize)
    return handlers


def method_descriptor(method: str) -> MethodDescriptor | None:
    """The descriptor of a gRPC method path (`/package.Service/Method`) in the default pool,
    or None when no loaded service has it."""
    try:
        found: MethodDescriptor = descriptor_pool.Default().FindMethodByName(
            method.lstrip("/").replace("/", "."))
    except KeyError:
        return None
    return found


# Wraps a method's behaviour; told whether the method's requests come as a stream.
Wrapper = Callable[[Callable[..., Any], bool], Callable[..., Any]]


def rewrapped(handler: grpc.RpcMethodHandler, single_response: Wrapper,
              streamed_responses: Wrapper,
              request_deserializer: Callable[[bytes], Any] | None) -> grpc.RpcMethodHandler:
    """A handler of the same kind as `handler`, with its behaviour wrapped by
    `single_response` or `streamed_responses`, and `request_deserializer` (interceptors)."""
    serializer = handler.response_serializer
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            single_response(handler.unary_unary, False), request_deserializer, serializer)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(
            single_response(handler.stream_unary, True), request_deserializer, serializer)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            streamed_responses(handler.unary_stream, False), request_deserializer, serializer)
    return grpc.stream_stream_rpc_method_handler(
        streamed_responses(handler.stream_stream, True), request_deserializer, serializer)


def refusal(handler: grpc.RpcMethodHandler, code: grpc.StatusCode, message: str,
            trailing_metadata: Sequence[tuple[str, str | bytes]] = ()
            ) -> grpc.RpcMethodHandler:
    """A handler that refuses the call without reading its request, with `trailing_metadata`
    (the error's details, if it has any). It takes the request as a stream, which gRPC reads
    only when asked, so the bytes a refused client sends stay in its stream's window; on the
    wire, the answer is the same."""
    async def refuse(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        await context.abort(code, message, trailing_metadata)

    async def refuse_stream(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext
                            ) -> AsyncIterator[Any]:
        await context.abort(code, message, trailing_metadata)
        yield  # pragma: no cover - abort raises; this makes the function a generator

    if handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(
            refuse_stream, response_serializer=handler.response_serializer)
    return grpc.stream_unary_rpc_method_handler(
        refuse, response_serializer=handler.response_serializer)


def failing(handler: grpc.RpcMethodHandler, error: Exception) -> grpc.RpcMethodHandler:
    """A handler that fails the call with `error`, without reading its request. An interceptor
    that fails before any handler runs returns it, so that the error interceptor, which wraps
    handlers, gives the failure its status, log line and count as it does any other's."""
    async def fail(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        raise error

    async def fail_stream(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext
                          ) -> AsyncIterator[Any]:
        raise error
        yield  # pragma: no cover - unreachable; this makes the function a generator

    if handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(
            fail_stream, response_serializer=handler.response_serializer)
    return grpc.stream_unary_rpc_method_handler(
        fail, response_serializer=handler.response_serializer)


async def close_stream(iterator: AsyncIterator[Any]) -> None:
    """Closes a request stream's generators, down to gRPC's own: one left at its `yield`
    keeps the message it gave until the collector finds it, and 160 calls of 12 MB, refused,
    grew the server by 1.2 GB."""
    if isinstance(iterator, AsyncGenerator):
        await iterator.aclose()


def when_call_ends(callback: Callable[[], None]) -> None:
    """Runs `callback` when the call ends, however it does (a message that never arrived
    included): each call runs in a task of its own."""
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - gRPC runs every call in a task
        callback()
        return
    task.add_done_callback(lambda _: callback())

"""Reflection streams held open or refused, for the tests that bound streams a client may
keep."""

from __future__ import annotations

import asyncio

import grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc


async def held_reflection(channel: grpc.aio.Channel, timeout: float) -> grpc.aio.StreamStreamCall:
    """A reflection stream that the server has answered once, held open."""
    call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    answer = await asyncio.wait_for(call.read(), timeout)
    assert answer.list_services_response.service
    return call


async def refused_reflection(channel: grpc.aio.Channel, timeout: float) -> None:
    """Opens a reflection stream and reads before asking anything: raises the AioRpcError of
    the refusal when the front door or the server refuses the stream.

    A refusal can arrive before a first request is sent, and gRPC then ends the call with
    INTERNAL ("Failed execute_batch") instead of the status the refusal carried, so
    `held_reflection` could see either. Reading first sees the status as sent. A stream that
    is served waits for its first request instead: the read times out (TimeoutError), which
    fails a test that expected a refusal."""
    call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
    try:
        await asyncio.wait_for(call.read(), timeout)
    finally:
        call.cancel()

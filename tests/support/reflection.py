"""Reflection streams held open, for the tests that bound streams a client may keep."""

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

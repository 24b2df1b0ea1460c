"""The conversion workers take callers' large requests in turn, through the front door: one
token's burst of costly Normalize calls held another token's large publishes for up to 32 s,
a first-come line putting them behind the whole burst."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc
import pytest

from shellexec.client._values import publish_request, to_protobuf_value
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.acp import codex_delta, codex_start
from support.rest import unique
from support.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.sqlite_only]

SERVICE = "/shellexec.v1.ShellExecService"
TIMEOUT_SECONDS = 300
BURST = 24
# Coloured assignments: the costliest text to mask, so each call holds the worker a while.
COSTLY = "\x1b[32mTOKEN\x1b[0m=abc\x1b[0m\n" * 9_000


def _costly_normalize() -> bytes:
    updates = [{"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
                "title": COSTLY, "rawInput": {"command": COSTLY}},
               {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed",
                "rawOutput": {"stdout": COSTLY, "exit_code": 0}}]
    request = pb.NormalizeShellExecRequest(
        updates=[to_protobuf_value(update) for update in updates], mask_secrets=True)
    return bytes(request.SerializeToString())


async def _completed_before_the_publish(stack: Stack, burst: str, other: str,
                                        session_id: str) -> int:
    """How many of the burst's calls completed between the other token's large publish being
    sent and its answer."""
    normalize_request = _costly_normalize()
    publish = publish_request(session_id, codex_delta("big", "x" * 40_000), 2)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.rest_port}") as channel:
        normalize = channel.unary_unary(f"{SERVICE}/NormalizeShellExec")
        publish_call = channel.unary_unary(
            f"{SERVICE}/PublishUpdate",
            request_serializer=pb.PublishUpdateRequest.SerializeToString,
            response_deserializer=pb.PublishUpdateResponse.FromString)
        calls = [asyncio.ensure_future(normalize(
            normalize_request, timeout=TIMEOUT_SECONDS,
            metadata=(("authorization", f"Bearer {burst}"),))) for _ in range(BURST)]
        try:
            # The worker is busy with the burst, and the rest of it is in line.
            await next(asyncio.as_completed(calls))
            before: int = sum(call.done() for call in calls)
            await publish_call(publish, timeout=TIMEOUT_SECONDS,
                               metadata=(("authorization", f"Bearer {other}"),))
            after: int = sum(call.done() for call in calls)
            return after - before
        finally:
            for call in calls:
                call.cancel()


def test_another_token_s_large_publish_waits_for_one_of_a_burst_not_all(
        stack_with: Callable[..., Stack]) -> None:
    stack = stack_with(SHELLEXEC_AUTH="on")
    burst = stack.create_token(unique("burst"), "ingest")
    other = stack.create_token(unique("other"), "ingest")
    api = stack.api_as(other)
    session_id = api.new_session()["id"]
    api.publish(session_id, codex_start("big", "make"), sequence=1)
    overtaken = asyncio.run(_completed_before_the_publish(stack, burst, other, session_id))
    # The one in the worker when the publish came, and one the worker had already been
    # handed; first come, first served put the publish behind the whole burst.
    assert overtaken <= 2, overtaken

"""The work one request may ask for is bounded (docs/api.md "Limits": a Normalize request's
updates in all, JSON values in a request), and large requests, converted in worker processes,
answer exactly as small ones (ADR 0045).

Depth is sent over gRPC through Envoy: the bound under test is the server's, and a REST body
nested that deep is the front door's business.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from shellexec.api.offload import INLINE_BELOW_BYTES
from shellexec.demo.rest import RestResponse
from shellexec.rules import limits
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.acp import codex_delta, codex_start
from support.stack import Stack

NORMALIZE = "/api/v1/shell-exec:normalize"


def json_values(value: Any) -> int:
    """How many JSON values `value` is: itself and everything it holds."""
    if isinstance(value, dict):
        return 1 + sum(json_values(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(json_values(item) for item in value)
    return 1


def filler(call_id: str, values: int) -> dict[str, Any]:
    """An update of the call that holds exactly `values` JSON values (the fold ignores
    `extra`)."""
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                              "extra": []}
    update["extra"] = [0] * (values - json_values(update))
    return update


def nested(depth: int) -> dict[str, Any]:
    """A plan update whose objects and arrays nest exactly `depth` deep (itself level 1)."""
    inner: Any = 0
    for _ in range(depth - 1):
        inner = [inner]
    return {"sessionUpdate": "plan", "entries": inner}


def assert_invalid(response: RestResponse, message: str) -> None:
    assert response.status == 400, response.body
    assert response.json()["message"] == message


@pytest.fixture
def grpc_through_envoy(stack: Stack) -> Iterator[pb_grpc.ShellExecServiceStub]:
    options = [("grpc.max_send_message_length", -1)]
    with grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}", options=options) as channel:
        yield pb_grpc.ShellExecServiceStub(channel)


def value_of(update: dict[str, Any]) -> struct_pb2.Value:
    value = struct_pb2.Value()
    json_format.ParseDict(update, value)
    return value


def invalid(call: Any, request: Any) -> str:
    with pytest.raises(grpc.RpcError) as refused:
        call(request, timeout=60)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()
    return str(refused.value.details())


# JSON values in a request: 100,000 in all the updates of a Normalize request, or in one
# published update; objects and arrays nest at most 32 deep

def test_normalize_holds_at_most_100000_values_in_all(stack: Stack) -> None:
    start = codex_start("n", "ls")
    at = [start, filler("n", limits.MAX_REQUEST_VALUES - json_values(start))]
    assert stack.api.request("POST", NORMALIZE, {"updates": at}).status == 200
    over = [start, filler("n", limits.MAX_REQUEST_VALUES - json_values(start) + 1)]
    assert_invalid(stack.api.request("POST", NORMALIZE, {"updates": over}),
                   f"updates: must hold at most {limits.MAX_REQUEST_VALUES} JSON values")


def test_a_published_update_holds_at_most_100000_values(stack: Stack) -> None:
    session = stack.api.new_session()
    path = f"/api/v1/task-sessions/{session['id']}/updates"
    at = filler("p", limits.MAX_REQUEST_VALUES) | {"sessionUpdate": "plan"}
    assert stack.api.request("POST", path, {"update": at}).status == 200
    over = filler("p", limits.MAX_REQUEST_VALUES + 1) | {"sessionUpdate": "plan"}
    assert_invalid(stack.api.request("POST", path, {"update": over}),
                   f"update: must hold at most {limits.MAX_REQUEST_VALUES} JSON values")


def test_updates_nest_at_most_32_deep(
        stack: Stack, grpc_through_envoy: pb_grpc.ShellExecServiceStub) -> None:
    deepest, deeper = nested(limits.MAX_UPDATE_DEPTH), nested(limits.MAX_UPDATE_DEPTH + 1)
    rule = f"must nest objects and arrays at most {limits.MAX_UPDATE_DEPTH} deep"
    start = value_of(codex_start("n", "ls"))
    grpc_through_envoy.NormalizeShellExec(
        pb.NormalizeShellExecRequest(updates=[start, value_of(deepest)]), timeout=30)
    assert invalid(grpc_through_envoy.NormalizeShellExec, pb.NormalizeShellExecRequest(
        updates=[start, value_of(deeper)])) == f"updates[1]: {rule}"
    session_id = stack.api.new_session()["id"]
    grpc_through_envoy.PublishUpdate(
        pb.PublishUpdateRequest(session_id=session_id, update=value_of(deepest)), timeout=30)
    assert invalid(grpc_through_envoy.PublishUpdate, pb.PublishUpdateRequest(
        session_id=session_id, update=value_of(deeper))) == f"update: {rule}"


# a Normalize request's updates in all: 8 MiB (protobuf size)

def padded_update(size: int) -> struct_pb2.Value:
    """A tool call update of call `n` whose protobuf Value is exactly `size` bytes."""
    padding = size
    for _ in range(8):
        value = value_of({"sessionUpdate": "tool_call_update", "toolCallId": "n",
                          "extra": "x" * padding})
        if (missing := size - value.ByteSize()) == 0:
            return value
        padding += missing
    raise AssertionError(f"no padding encodes to {size} bytes")


def test_normalize_updates_hold_at_most_8_mib_in_all(
        grpc_through_envoy: pb_grpc.ShellExecServiceStub) -> None:
    start = value_of(codex_start("n", "ls"))
    rest = limits.MAX_NORMALIZE_BYTES - start.ByteSize()
    half = rest // 2
    at = [start, padded_update(half), padded_update(rest - half)]
    grpc_through_envoy.NormalizeShellExec(pb.NormalizeShellExecRequest(updates=at), timeout=60)
    over = [start, padded_update(half), padded_update(rest - half + 1)]
    total = limits.MAX_NORMALIZE_BYTES + 1
    assert invalid(grpc_through_envoy.NormalizeShellExec,
                   pb.NormalizeShellExecRequest(updates=over)) == (
        f"updates: are {total} bytes in all; the limit is {limits.MAX_NORMALIZE_BYTES}")


# Large requests are converted in a worker process and answer as small ones do.

def test_a_large_normalize_answers_as_its_parts_say(stack: Stack) -> None:
    lines = [f"line {index:05d} of a long build log\n"
             for index in range(limits.MAX_NORMALIZE_UPDATES - 1)]
    updates = [codex_start("n", "seq"), *(codex_delta("n", line) for line in lines)]
    assert len(str(updates)) > INLINE_BELOW_BYTES
    answer = stack.api.request("POST", NORMALIZE, {"updates": updates})
    assert answer.status == 200, answer.body
    assert answer.json()["output"]["stdout"] == "".join(lines)
    small = stack.api.request("POST", NORMALIZE, {"updates": updates[:3]}).json()
    assert small["output"]["stdout"] == "".join(lines[:2])


@pytest.mark.parametrize("size", [16, INLINE_BELOW_BYTES * 2])
def test_bytes_that_are_not_the_request_message_are_invalid_naming_the_request(
        stack: Stack, size: int) -> None:
    with grpc.insecure_channel(stack.grpc_target) as channel:
        for method in ("NormalizeShellExec", "PublishUpdate"):
            call = channel.unary_unary(f"/shellexec.v1.ShellExecService/{method}")
            details = invalid(call, b"\xff" * size)
            assert details.startswith("request: is not a valid shellexec.v1."), details

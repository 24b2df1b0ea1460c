"""Errors carry google.rpc details (ADR 0060), through the real Envoy: in the REST JSON body
(`details` with `@type`) and as gRPC details read with `shellexec.client.error_details`.

Every reason of docs/api.md is produced here both ways, but TOO_MANY_WATCHERS, which needs a
caller's full share of open feeds (tests/service/test_watcher_bound.py produces it both ways),
and the refusals of a token, which need authentication on
(tests/service/test_token_refusal_reasons.py produces them in every protocol); the BadRequest
and ResourceInfo shapes too. A reused `sequence` with another update is
SEQUENCE_CONFLICT (409), the same update (whatever its key order) stays a duplicate."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from shellexec.client import ShellExecClient, error_details, error_reason
from shellexec.demo.rest import RestResponse
from shellexec.vocabulary import (
    ERROR_REASONS,
    REASON_SCOPE_MISSING,
    REASON_TASK_NOT_COVERED,
    REASON_TOKEN_MISSING,
    REASON_TOKEN_UNKNOWN,
    REASON_TOO_MANY_WATCHERS,
)

from support.acp import agent_text
from support.rest import Api, unique
from support.stack import Stack

GOOGLE_RPC = "type.googleapis.com/google.rpc."


@pytest.fixture(scope="module")
def envoy_grpc(stack: Stack) -> Iterator[ShellExecClient]:
    """A gRPC client of the front door (Envoy's REST port also serves native gRPC)."""
    with ShellExecClient(f"127.0.0.1:{stack.rest_port}") as connected:
        yield connected


def _session_with_turn(api: Api) -> str:
    session_id = str(api.new_session()["id"])
    api.start_turn(session_id)
    return session_id


def _published(api: Api) -> str:
    session_id = str(api.new_session()["id"])
    api.publish(session_id, agent_text("first"), sequence=1)
    return session_id


def _task_of(request_id: str) -> str:
    """The task `_created_with_request_id` created its session in (request ids are per task,
    so only the same task with another agent reuses one)."""
    return f"task-{request_id}"


def _created_with_request_id(api: Api) -> str:
    request_id = unique("create")
    api.call("POST", "/api/v1/task-sessions", {"task_id": _task_of(request_id), "agent": "codex",
                                               "request_id": request_id})
    return request_id


@dataclass(frozen=True)
class Reason:
    """How to bring a reason about over REST and over gRPC, and what the caller hears."""

    reason: str
    http: int
    code: grpc.StatusCode
    prepare: Callable[[Api], str]
    rest: Callable[[Api, str], RestResponse]
    grpc_call: Callable[[ShellExecClient, str], Any]
    field: str = ""
    """The field a BadRequest detail names beside the ErrorInfo, if any."""


REASONS = [
    Reason("TURN_ALREADY_RUNNING", 400, grpc.StatusCode.FAILED_PRECONDITION, _session_with_turn,
           lambda api, sid: api.request("POST", f"/api/v1/task-sessions/{sid}/turns", {}),
           lambda client, sid: client.start_turn(sid)),
    Reason("SEQUENCE_CONFLICT", 409, grpc.StatusCode.ALREADY_EXISTS, _published,
           lambda api, sid: api.request("POST", f"/api/v1/task-sessions/{sid}/updates",
                                        {"update": agent_text("second"), "sequence": 1}),
           lambda client, sid: client.publish(sid, agent_text("second"), 1)),
    Reason("REQUEST_ID_REUSED", 400, grpc.StatusCode.INVALID_ARGUMENT, _created_with_request_id,
           lambda api, rid: api.request("POST", "/api/v1/task-sessions",
                                        {"task_id": _task_of(rid), "agent": "claude",
                                         "request_id": rid}),
           lambda client, rid: client.create_session(_task_of(rid), "claude", rid),
           field="request_id"),
    Reason("REVISION_AHEAD", 400, grpc.StatusCode.INVALID_ARGUMENT,
           lambda api: str(api.new_session()["id"]),
           lambda api, sid: api.request(
               "GET", f"/api/v1/task-sessions/{sid}/messages:watch?since_revision=5"),
           lambda client, sid: list(client.watch(sid, since_revision=5)),
           field="since_revision"),
]


# Reasons produced, both ways, by a test of their own.
ELSEWHERE = {REASON_TOO_MANY_WATCHERS: "tests/service/test_watcher_bound.py",
             **dict.fromkeys((REASON_TOKEN_MISSING, REASON_TOKEN_UNKNOWN, REASON_SCOPE_MISSING,
                              REASON_TASK_NOT_COVERED),
                             "tests/service/test_token_refusal_reasons.py")}


def test_the_tests_cover_every_reason() -> None:
    assert sorted([*(r.reason for r in REASONS), *ELSEWHERE]) == sorted(ERROR_REASONS)


def _by_type(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {detail["@type"].removeprefix(GOOGLE_RPC): detail for detail in body["details"]}


@pytest.mark.parametrize("case", REASONS, ids=lambda r: r.reason)
def test_a_reason_is_in_the_rest_json_details(stack: Stack, case: Reason) -> None:
    response = case.rest(stack.api, case.prepare(stack.api))

    assert response.status == case.http, response.body
    body = response.json()
    assert body["code"] == case.code.value[0]
    details = _by_type(body)
    assert details["ErrorInfo"]["reason"] == case.reason
    assert details["ErrorInfo"]["domain"] == "shellexec"
    if case.field:
        assert [v["field"] for v in details["BadRequest"]["field_violations"]] == [case.field]
        assert set(details) == {"ErrorInfo", "BadRequest"}
    else:
        assert set(details) == {"ErrorInfo"}


@pytest.mark.parametrize("case", REASONS, ids=lambda r: r.reason)
def test_a_reason_is_in_the_grpc_details_through_envoy(stack: Stack, envoy_grpc: ShellExecClient,
                                                       case: Reason) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        case.grpc_call(envoy_grpc, case.prepare(stack.api))

    error = raised.value
    assert error.code() == case.code
    assert error_reason(error) == case.reason
    found = error_details(error)
    assert found.domain == "shellexec"
    assert [field for field, _ in found.field_violations] == ([case.field] if case.field else [])


def test_an_invalid_argument_names_its_field_in_a_bad_request(
        stack: Stack, envoy_grpc: ShellExecClient) -> None:
    response = stack.api.request("POST", "/api/v1/task-sessions", {"task_id": "has space"})

    assert response.status == 400
    body = response.json()
    description = body["message"].removeprefix("task_id: ")
    assert description.startswith("must be 1 to 128")
    assert body["details"] == [{
        "@type": GOOGLE_RPC + "BadRequest",
        "field_violations": [{"field": "task_id", "description": description, "reason": ""}]}]
    with pytest.raises(grpc.RpcError) as raised:
        envoy_grpc.create_session("has space")
    found = error_details(raised.value)
    assert found.field_violations == (("task_id", description),)
    assert found.reason == ""


@pytest.mark.parametrize(("path", "resource_type", "name"), [
    ("/api/v1/task-sessions/ses_" + "0" * 32, "shellexec.v1.Session", "ses_" + "0" * 32),
    ("/api/v1/task-sessions/" + "x" * 100, "shellexec.v1.Session", "x" * 64 + "…"),
    ("/api/v1/tasks/no-such-task/boot-state", "shellexec.v1.Task", "no-such-task"),
])
def test_not_found_names_the_resource_in_a_resource_info(
        stack: Stack, path: str, resource_type: str, name: str) -> None:
    response = stack.api.request("GET", path)

    assert response.status == 404
    body = response.json()
    assert body["details"] == [{
        "@type": GOOGLE_RPC + "ResourceInfo", "resource_type": resource_type,
        "resource_name": name, "owner": "", "description": body["message"]}]


def test_not_found_over_grpc_through_envoy(envoy_grpc: ShellExecClient) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        envoy_grpc.get_session("ses_" + "1" * 32)

    found = error_details(raised.value)
    assert (found.resource_type, found.resource_name) == ("shellexec.v1.Session",
                                                          "ses_" + "1" * 32)


def test_a_repeated_sequence_is_a_duplicate_only_with_the_same_update(stack: Stack) -> None:
    session_id = str(stack.api.new_session()["id"])
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    reordered = {"content": {"text": "hi", "type": "text"}, "sessionUpdate": "agent_message_chunk"}
    path = f"/api/v1/task-sessions/{session_id}/updates"

    first = stack.api.request("POST", path, {"update": update, "sequence": 3})
    again = stack.api.request("POST", path, {"update": reordered, "sequence": 3})
    other = stack.api.request("POST", path, {"update": agent_text("other"), "sequence": 3})

    assert (first.status, first.json()["duplicate"]) == (200, False)
    assert (again.status, again.json()["duplicate"]) == (200, True)
    assert other.status == 409
    assert other.json()["message"].startswith("sequence: 3 was already published")
    assert [m["content"] for m in stack.api.messages(session_id)] == ["hi"]

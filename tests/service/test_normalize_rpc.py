"""The stateless Normalize and Summarize routes, through Envoy and over gRPC."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from shellexec import normalize
from shellexec.client import ShellExecClient
from shellexec.v1 import shell_exec_service_pb2, shell_output_pb2

from support.acp import codex_delta, codex_end, codex_start, fixture_names, load_fixture
from support.stack import Stack

CODEX_EXIT_4 = [codex_start("n1", "make test"), codex_delta("n1", "a\n"),
                codex_delta("n1", "b\n"), codex_end("n1", "a\nb\n", 4)]


def test_normalize_route_folds_updates_into_one_record(stack: Stack) -> None:
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize",
                                 {"updates": CODEX_EXIT_4, "agent": "codex"})
    assert response.status == 200, response.body
    assert response.json() == {
        "shell_exec": {"command": "make test", "work_dir": "/home/dev/proj",
                       "output": {"exit_code": 4, "truncated": False, "has_output": True,
                                  "stdout_bytes": 4, "stderr_bytes": 0},
                       "result": "failure"},
        "output": {"exit_code": 4, "stdout": "a\nb\n", "stderr": "", "truncated": False},
        "status": "failed",
        "result": "failure",
        "is_shell": True,
        "title": "make test",
    }


def test_normalize_says_when_a_call_is_not_a_shell_command(stack: Stack) -> None:
    read_call = [
        {"sessionUpdate": "tool_call", "toolCallId": "r1", "kind": "read",
         "title": "Read notes.txt", "status": "pending", "rawInput": {"path": "notes.txt"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "r1", "status": "completed",
         "content": [{"type": "content", "content": {"type": "text", "text": "hello\n"}}]}]
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize",
                                 {"updates": read_call})
    assert response.status == 200, response.body
    body = response.json()
    assert (body["is_shell"], body["title"], body["shell_exec"]["command"]) == (
        False, "Read notes.txt", "")
    # The same call becomes a shell command when an update says so.
    became_shell = [*read_call[:1], {"sessionUpdate": "tool_call_update", "toolCallId": "r1",
                                     "kind": "execute", "rawInput": {"command": "cat notes.txt"}}]
    body = stack.api.request("POST", "/api/v1/shell-exec:normalize",
                             {"updates": became_shell}).json()
    assert (body["is_shell"], body["shell_exec"]["command"]) == (True, "cat notes.txt")


def test_normalize_over_grpc_matches_rest(stack: Stack, client: ShellExecClient) -> None:
    response = client.normalize(CODEX_EXIT_4)
    assert (response.is_shell, response.title) == (True, "make test")
    assert response.result == "failure"
    assert response.output.exit_code == 4
    assert response.output.stdout == "a\nb\n"


Update = dict[str, Any]

CLAUDE_START: Update = {
    "sessionUpdate": "tool_call", "toolCallId": "cl1", "kind": "execute", "name": "Bash",
    "title": "cat build.log", "status": "pending", "rawInput": {"command": "cat build.log"}}
TERMINAL_OUTPUT: Update = {"terminal_output": {"terminal_id": "cl1", "data": "terminal text\n"}}
CLAUDE_FINAL: Update = {
    "sessionUpdate": "tool_call_update", "toolCallId": "cl1", "status": "failed",
    "rawOutput": "Exit code 2\nmodel copy\n",
    "_meta": {"terminal_exit": {"terminal_id": "cl1", "exit_code": 2}}}


@pytest.mark.parametrize("updates", [
    [CLAUDE_START, {**CLAUDE_FINAL, "_meta": {**CLAUDE_FINAL["_meta"], **TERMINAL_OUTPUT}}],
    [CLAUDE_START, {"sessionUpdate": "tool_call_update", "toolCallId": "cl1",
                    "_meta": TERMINAL_OUTPUT}, CLAUDE_FINAL],
], ids=["same-update", "earlier-update"])
def test_normalize_keeps_terminal_output_over_a_plain_raw_output(
        stack: Stack, updates: list[Update]) -> None:
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize",
                                 {"updates": updates, "agent": "claude"})
    assert response.status == 200, response.body
    body = response.json()
    assert body["output"] == {"exit_code": 2, "stdout": "terminal text\n", "truncated": False}
    assert (body["status"], body["result"]) == ("failed", "failure")


@pytest.mark.parametrize(("body", "field"), [
    ({}, "updates"),
    ({"updates": []}, "updates"),
    ({"updates": ["not an object"]}, "updates[0]"),
    ({"updates": [codex_start("x", "ls"), 5]}, "updates[1]"),
    ({"updates": [codex_start("x", "ls")] * 1001}, "updates"),
    ({"updates": [codex_start("x", "ls")], "agent": "a" * 65}, "agent"),
    # A command of one call and the output and exit of another made one record.
    ({"updates": [codex_start("a", "ls"), {"sessionUpdate": "plan", "entries": []},
                  codex_end("b", "B\n", 1)]}, "updates[2].toolCallId"),
])
def test_normalize_rejects_malformed_input_naming_the_problem(stack: Stack, body: object,
                                                              field: str) -> None:
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize", body)
    assert response.status == 400, response.body
    assert response.json()["message"].startswith(field)


def test_normalize_names_both_tool_calls_of_a_mix(stack: Stack) -> None:
    updates = [codex_start("call_" + "a" * 100, "ls"), codex_end("call_b", "B\n", 1)]
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize", {"updates": updates})
    assert response.status == 400, response.body
    assert response.json()["message"] == (
        "updates[1].toolCallId: names another tool call than updates[0] ('call_b', not "
        f"'call_{'a' * 59}…'): Normalize folds the updates of one tool call")


def test_normalize_rejects_an_oversized_update(stack: Stack) -> None:
    update = codex_delta("x", "y" * (4 * 1024 * 1024 + 10))
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize", {"updates": [update]})
    assert response.status == 400
    assert "limit" in response.json()["message"]


def test_normalize_rejects_a_body_that_is_not_an_object(stack: Stack) -> None:
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize", raw=b"[1, 2]")
    assert response.status == 400


def test_summarize_route_projects_a_full_output(stack: Stack) -> None:
    response = stack.api.request("POST", "/api/v1/shell-exec:summarize", {
        "output": {"exit_code": 0, "stdout": "héllo\n", "stderr": "", "truncated": False}})
    assert response.status == 200, response.body
    assert response.json() == {"summary": {"exit_code": 0, "truncated": False,
                                           "has_output": True, "stdout_bytes": 7,
                                           "stderr_bytes": 0}}


def test_summarize_without_exit_code_keeps_it_absent(client: ShellExecClient) -> None:
    summary = client.summarize(shell_output_pb2.ShellOutput(stdout=""))
    assert not summary.HasField("exit_code")
    assert summary.has_output is False


def test_summarize_rejects_missing_output_and_oversized_fields(
        stack: Stack, client: ShellExecClient) -> None:
    # The wrapper always sends an output, so call the method with a bare request.
    summarize = grpc.insecure_channel(stack.grpc_target).unary_unary(
        "/shellexec.v1.ShellExecService/SummarizeShellOutput",
        request_serializer=shell_exec_service_pb2.SummarizeShellOutputRequest.SerializeToString,
        response_deserializer=shell_exec_service_pb2.SummarizeShellOutputResponse.FromString)
    with pytest.raises(grpc.RpcError) as missing:
        summarize(shell_exec_service_pb2.SummarizeShellOutputRequest(), timeout=10)
    assert missing.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as oversized:
        client.summarize(shell_output_pb2.ShellOutput(stdout="x" * (262_144 + 1)))
    assert oversized.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "output.stdout" in str(oversized.value.details())


@pytest.mark.parametrize("name", fixture_names())
def test_stored_record_matches_normalize_for_every_provider_fixture(
        stack: Stack, client: ShellExecClient, name: str) -> None:
    updates = load_fixture(name)
    expected = normalize.shell_record(normalize.fold_all(updates))
    session = client.create_session(f"fixture-{name}"[:120].replace("/", "-"))
    message_id = ""
    for sequence, update in enumerate(updates, start=1):
        published = client.publish(session.id, update, sequence=sequence)
        message_id = published.message.id or message_id
    if not expected.is_shell:
        return
    stored = client.shell_output(session.id, message_id)
    assert stored.status == expected.status
    assert (stored.output.exit_code if stored.output.HasField("exit_code") else None) == (
        expected.output.exit_code)
    assert (stored.output.stdout if stored.output.HasField("stdout") else None) == (
        expected.output.stdout)
    assert (stored.output.stderr if stored.output.HasField("stderr") else None) == (
        expected.output.stderr)
    assert stored.output.truncated == expected.output.truncated

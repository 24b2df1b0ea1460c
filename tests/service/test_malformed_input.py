"""Every malformed input gets 400 / INVALID_ARGUMENT naming the field, never 500, UNKNOWN or an
internal exception's name: `%FF` in a path id, JSON nested too deeply, bytes that are not the
request message over gRPC (direct and through Envoy), values of the wrong type."""

from __future__ import annotations

import grpc
import pytest

from shellexec.v1 import shell_exec_service_pb2 as pb

from support.acp import codex_start
from support.stack import Stack

SERVICE = pb.DESCRIPTOR.services_by_name["ShellExecService"]
INTERNAL_NAMES = ("Error", "Exception", "<class", "Traceback", "upb")


def assert_names_the_field(message: str, field: str) -> None:
    assert message.startswith(f"{field}:"), message
    assert not any(name in message for name in INTERNAL_NAMES), message


@pytest.mark.parametrize(("method", "path", "field"), [
    ("GET", "/api/v1/task-sessions/%FF", "session_id"),
    ("GET", "/api/v1/task-sessions/%FF/messages", "session_id"),
    ("GET", "/api/v1/task-sessions/%FF/messages:watch", "session_id"),
    ("POST", "/api/v1/task-sessions/%FF/turns", "session_id"),
    ("POST", "/api/v1/task-sessions/%FF/updates", "session_id"),
    ("POST", "/api/v1/task-sessions/SES/turns/%FF:complete", "turn_id"),
    ("GET", "/api/v1/task-sessions/SES/messages/%FF/shell-output", "message_id"),
    ("GET", "/api/v1/task-sessions/SES/messages?before=%FF", "before"),
    ("GET", "/api/v1/tasks/%FF/boot-state", "task_id"),
])
def test_a_path_or_query_value_that_is_not_utf8_is_400_naming_it(
        stack: Stack, method: str, path: str, field: str) -> None:
    session_id = stack.api.new_session()["id"]
    body = {"update": codex_start("p1", "ls")} if method == "POST" else None
    response = stack.api.request(method, path.replace("SES", session_id), body)
    assert response.status == 400, response.body
    assert response.json()["code"] == 3
    assert_names_the_field(response.json()["message"], field)


def nested(depth: int) -> bytes:
    """A JSON value holding `depth` objects, one inside the other."""
    return b'{"x":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("depth", [40, 60, 90])
def test_json_nested_past_what_the_server_decodes_is_400_naming_the_field(
        stack: Stack, depth: int) -> None:
    session_id = stack.api.new_session()["id"]
    publish = stack.api.request(
        "POST", f"/api/v1/task-sessions/{session_id}/updates",
        raw=b'{"update": {"sessionUpdate": "plan", "d": ' + nested(depth) + b"}}")
    normalize = stack.api.request(
        "POST", "/api/v1/shell-exec:normalize",
        raw=b'{"updates": [{"sessionUpdate": "tool_call", "toolCallId": "a", "d": '
        + nested(depth) + b"}]}")
    for response, field in ((publish, "update"), (normalize, "updates")):
        assert response.status == 400, response.body
        assert response.json()["code"] == 3
        assert_names_the_field(response.json()["message"], field)
    assert stack.api.list_messages(session_id)["total"] == 0


@pytest.mark.parametrize("escape", [rb"\ud800", rb"\udc00 tail", rb"\ud83dx"])
def test_a_lone_surrogate_escape_is_a_400_json_error_and_nothing_is_stored(
        stack: Stack, escape: bytes) -> None:
    """JSON allows `\\ud800`; UTF-8, and so protobuf's strings, cannot carry it."""
    session_id = stack.api.new_session()["id"]
    response = stack.api.request(
        "POST", f"/api/v1/task-sessions/{session_id}/updates",
        raw=b'{"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", '
        b'"text": "a' + escape + b'"}}}')
    assert response.status == 400, response.body
    assert response.headers["content-type"] == "application/json"
    assert response.json()["code"] == 3
    assert stack.api.list_messages(session_id)["total"] == 0


@pytest.mark.parametrize("depth", [99, 1000, 100_000])
def test_json_nested_past_what_envoy_parses_is_a_400_json_error(stack: Stack,
                                                                 depth: int) -> None:
    session_id = stack.api.new_session()["id"]
    response = stack.api.request(
        "POST", f"/api/v1/task-sessions/{session_id}/updates",
        raw=b'{"update": {"sessionUpdate": "plan", "d": ' + nested(depth) + b"}}")
    assert response.status == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json()["code"] == 3


@pytest.mark.parametrize(("body", "field"), [
    ({"task_id": 5}, "task_id"),
    ({"task_id": "t", "agent": {"name": "codex"}}, "agent"),
    ({"task_id": "t", "request_id": True}, "request_id"),
])
def test_a_value_of_the_wrong_type_is_400_naming_the_field(stack: Stack, body: object,
                                                           field: str) -> None:
    response = stack.api.request("POST", "/api/v1/task-sessions", body)
    assert response.status == 400
    assert response.json()["code"] == 3
    assert field in response.json()["message"]


def test_a_sequence_of_the_wrong_type_is_400_naming_it(stack: Stack) -> None:
    session_id = stack.api.new_session()["id"]
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session_id}/updates",
                                 {"update": codex_start("w", "ls"), "sequence": "abc"})
    assert response.status == 400
    assert response.json()["message"].startswith("sequence")


def grpc_call(target: str, method: str, body: bytes) -> grpc.RpcError | None:
    """The error a raw call of `method` with `body` ends with (None if it succeeded)."""
    with grpc.insecure_channel(target) as channel:
        streaming = SERVICE.methods_by_name[method].server_streaming
        path = f"/{SERVICE.full_name}/{method}"
        call = (channel.unary_stream if streaming else channel.unary_unary)(path)
        try:
            answer = call(body, timeout=10)
            if streaming:
                next(iter(answer))
        except grpc.RpcError as error:
            return error
    return None


TARGETS = ["direct", "envoy"]


def target_of(stack: Stack, through: str) -> str:
    return stack.grpc_target if through == "direct" else f"127.0.0.1:{stack.rest_port}"


@pytest.mark.parametrize("through", TARGETS)
@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
def test_garbage_bytes_over_grpc_are_invalid_argument(stack: Stack, through: str,
                                                      method: str) -> None:
    error = grpc_call(target_of(stack, through), method, b"\xff\xff\xff\xff")
    assert error is not None
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_names_the_field(error.details() or "", "request")


@pytest.mark.parametrize("through", TARGETS)
@pytest.mark.parametrize(("method", "field"), [
    ("GetSession", "session_id"), ("WatchMessages", "session_id"),
    ("CreateSession", "task_id"), ("GetBootState", "task_id"),
])
def test_a_string_field_that_is_not_utf8_over_grpc_is_invalid_argument_naming_it(
        stack: Stack, through: str, method: str, field: str) -> None:
    error = grpc_call(target_of(stack, through), method, b"\x0a\x02\xff\xfe")
    assert error is not None
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_names_the_field(error.details() or "", field)


def test_a_message_field_that_does_not_decode_is_invalid_argument_naming_it(
        stack: Stack) -> None:
    session_id = stack.api.new_session()["id"]
    body = pb.PublishUpdateRequest(session_id=session_id).SerializeToString()
    error = grpc_call(stack.grpc_target, "PublishUpdate", body + b"\x12\x03\x1a\x01\xff")
    assert error is not None
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_names_the_field(error.details() or "", "update")


def test_garbage_to_health_and_reflection_is_invalid_argument(stack: Stack) -> None:
    with grpc.insecure_channel(stack.grpc_target) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        with pytest.raises(grpc.RpcError) as caught:
            check(b"\x0a\x02\xff\xfe", timeout=10)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert_names_the_field(caught.value.details() or "", "service")
        reflect = channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        with pytest.raises(grpc.RpcError) as caught:
            list(reflect(iter([b"\xff\xff\xff"]), timeout=10))
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT

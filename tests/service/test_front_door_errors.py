"""Every error the front door answers is `{"code": N, "message": "..."}` JSON with the REST
status a user expects and the matching gRPC code (docs/api.md, "Errors"), whether Envoy or the
server produced it; native gRPC callers keep gRPC errors."""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest

from shellexec.app.envoy import DESCRIPTOR
from shellexec.app.front_door_errors import verb_like_value_routes
from shellexec.app.rest_bindings import read_bindings
from shellexec.demo.rest import RestResponse

from support.rest import unique
from support.stack import Stack

INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED, UNIMPLEMENTED, UNAVAILABLE = 3, 5, 8, 12, 14


def assert_json_error(response: RestResponse, status: int, code: int) -> str:
    """Asserts the status and the error body; returns the message."""
    assert response.status == status, response.body
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) >= {"code", "message"}
    assert body["code"] == code
    assert isinstance(body["message"], str)
    assert body["message"]
    return str(body["message"])


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v2/task-sessions", "/not/here"])
def test_unknown_path_is_404_not_found(stack: Stack, path: str) -> None:
    message = assert_json_error(stack.api.request("GET", path), 404, NOT_FOUND)
    assert path in message


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("PUT", "/api/v1/task-sessions/ses_x", "DELETE, GET"),
    ("POST", "/api/v1/task-sessions/ses_x", "DELETE, GET"),
    ("POST", "/api/v1/tasks/t1", "DELETE"),
    ("DELETE", "/api/v1/task-sessions", "GET, POST"),
    ("PUT", "/api/v1/task-sessions/ses_x/updates", "POST"),
    ("GET", "/api/v1/shell-exec:normalize", "POST"),
    ("POST", "/api/v1/task-sessions/ses_x/messages", "GET"),
    ("POST", "/api/v1/agent-sessions/ses_x/messages", "GET"),
    ("GET", "/api/v1/task-sessions/ses_x/turns/turn_x:complete", "POST"),
])
def test_known_path_with_wrong_method_is_405_unimplemented_with_allow(
        stack: Stack, method: str, path: str, allow: str) -> None:
    response = stack.api.request(method, path, {} if method != "GET" else None)
    message = assert_json_error(response, 405, UNIMPLEMENTED)
    assert response.headers["allow"] == allow
    assert message.startswith(f"method {method} not allowed")


@pytest.mark.parametrize(("method", "suffix"), [
    ("GET", "/"), ("GET", "//"), ("GET", "/messages/"), ("GET", "//messages"),
    ("POST", "/turns/"), ("DELETE", "/"), ("PUT", "/"), ("GET", "/messages/:watch"),
])
def test_a_rest_path_with_an_empty_segment_names_nothing(stack: Stack, method: str,
                                                         suffix: str) -> None:
    """The transcoder skips empty segments: `.../{id}/` answered the session itself, a DELETE
    on it deleted it, and a PUT got 404 where the path's own gets 405."""
    session_id = stack.api.new_session()["id"]
    response = stack.api.request(method, f"/api/v1/task-sessions/{session_id}{suffix}",
                                 None if method in ("GET", "DELETE") else {})
    message = assert_json_error(response, 404, NOT_FOUND)
    assert message.startswith("no such path: a REST path has no empty segment")
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session_id}").status == 200
    tasks = stack.api.request("GET", "/api/v1/tasks/t1/boot-state/")
    assert_json_error(tasks, 404, NOT_FOUND)
    normalize = stack.api.request("POST", "/api/v1/shell-exec/:normalize", {"updates": []})
    assert_json_error(normalize, 404, NOT_FOUND)


def test_a_task_id_that_starts_with_a_colon_is_not_an_empty_segment(stack: Stack) -> None:
    """Only the API's own verbs count after a `/`: `:build` is a task id like any other."""
    task_id = unique(":build")
    stack.api.new_session(task_id=task_id)
    assert stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 200
    deleted = stack.api.request("DELETE", f"/api/v1/tasks/{task_id}")
    assert deleted.status == 200, deleted.body


@pytest.mark.parametrize(("prefix", "verb"), [
    ("ns", "complete"), ("ns", "watch"), ("ns", "normalize"), ("ns", "summarize"), ("", "watch")])
def test_a_task_id_ending_in_a_verb_is_told_to_escape_its_colon(stack: Stack, prefix: str,
                                                                verb: str) -> None:
    """The transcoder read `ns:complete` as the id `ns` and the verb `complete`, found no
    method and answered 404, which a client deleting the task takes for "already gone"."""
    task_id = f"{unique(prefix)}:{verb}" if prefix else f":{verb}"  # an id may start with :
    session = stack.api.new_session(task_id=task_id)
    refused = stack.api.request("DELETE", f"/api/v1/tasks/{task_id}")
    message = assert_json_error(refused, 400, INVALID_ARGUMENT)
    assert message.startswith("task_id: a value that ends in one of the API's verbs")
    assert f":{verb}" in message
    assert "%3A" in message
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}").status == 200
    escaped = task_id.replace(f":{verb}", f"%3A{verb}")
    assert stack.api.request("DELETE", f"/api/v1/tasks/{escaped}").status == 200
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}").status == 404


@pytest.mark.parametrize("path", ["/api/v1/tasks/a^b:complete", "/api/v1/tasks/[x:watch",
                                  "/api/v1/tasks/:normalize"])
def test_the_verb_route_takes_any_value_before_the_verb(path: str) -> None:
    """The route's regex was cut from the template's inside a character class, so a value
    holding `^` or `[` slipped past it to the transcoder's "Could not resolve"."""
    routes = verb_like_value_routes(read_bindings(DESCRIPTOR))
    assert any(re.fullmatch(route["match"]["safe_regex"]["regex"], path) for route in routes)
    assert not any(re.fullmatch(route["match"]["safe_regex"]["regex"], served)
                   for route in routes for served in (
                       "/api/v1/task-sessions/ses_x/turns/turn_x:complete",
                       "/api/v1/task-sessions/ses_x/messages:watch",
                       "/api/v1/shell-exec:normalize", "/api/v1/tasks/t1",
                       # A session id never holds `:`: any other value is 404, as unknown.
                       "/api/v1/task-sessions/x:watch"))


def test_served_methods_are_not_shadowed_by_405_routes(stack: Stack) -> None:
    session = stack.api.new_session()
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}").status == 200
    aliased = stack.api.request("GET", f"/api/v1/agent-sessions/{session['id']}/messages")
    assert aliased.status == 200
    created = stack.api.request("POST", "/api/v1/task-sessions", {"task_id": "not-shadowed"})
    assert created.status == 200


def test_malformed_json_body_is_400_invalid_argument(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session['id']}/updates",
                                 raw=b'{"update": {')
    assert_json_error(response, 400, INVALID_ARGUMENT)


def test_wrongly_typed_body_field_is_400_invalid_argument(stack: Stack) -> None:
    response = stack.api.request("POST", "/api/v1/task-sessions", {"task_id": 5})
    message = assert_json_error(response, 400, INVALID_ARGUMENT)
    assert message.startswith("task_id")


def test_wrongly_typed_query_parameter_is_400_invalid_argument(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}/messages?limit=abc")
    message = assert_json_error(response, 400, INVALID_ARGUMENT)
    assert message.startswith("limit")


def test_unknown_query_parameter_is_400_invalid_argument(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}/messages?bogus=1")
    message = assert_json_error(response, 400, INVALID_ARGUMENT)
    assert "bogus" in message


def test_body_over_8_mib_is_413_resource_exhausted(stack: Stack) -> None:
    session = stack.api.new_session()
    body = b'{"update": {"sessionUpdate": "plan", "blob": "' + b"x" * (9 * 1024 * 1024) + b'"}}'
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session['id']}/updates", raw=body)
    assert_json_error(response, 413, RESOURCE_EXHAUSTED)


def test_server_errors_keep_their_own_json_body(stack: Stack) -> None:
    response = stack.api.request("GET", "/api/v1/task-sessions/ses_nope")
    assert_json_error(response, 404, NOT_FOUND)
    # `details` is written by the transcoder's convert_grpc_status, never by a local reply.
    assert response.json() == {
        "code": NOT_FOUND, "message": "session 'ses_nope' not found",
        "details": [{"@type": "type.googleapis.com/google.rpc.ResourceInfo",
                     "resource_type": "shellexec.v1.Session", "resource_name": "ses_nope",
                     "owner": "", "description": "session 'ses_nope' not found"}]}


def test_web_page_routes_still_serve_their_files(stack: Stack) -> None:
    for path, content_type in (("/", "text/html"), ("/sessions/ses_x", "text/html"),
                               ("/app.js", "text/javascript")):
        response = stack.api.request("GET", path)
        assert response.status == 200
        assert response.headers["content-type"].startswith(content_type)


def grpc_error_through_envoy(stack: Stack, method: str) -> grpc.RpcError:
    """The error a native gRPC call of `method` (with an empty body) gets through Envoy."""
    with grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}") as channel:
        call = channel.unary_unary(method)
        with pytest.raises(grpc.RpcError) as raised:
            call(b"", timeout=10)
    error = raised.value
    assert '"code"' not in (error.details() or "")  # a gRPC status, not the REST JSON body
    return error


def test_native_grpc_errors_from_envoy_stay_grpc(stack: Stack) -> None:
    error = grpc_error_through_envoy(stack, "/no.such.Service/Call")
    assert error.code() == grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.slow
def test_server_down_is_503_unavailable_and_grpc_unavailable(own_stack: Stack) -> None:
    own_stack.kill_server()
    response = own_stack.api.request("GET", "/api/v1/task-sessions/ses_x")
    assert_json_error(response, 503, UNAVAILABLE)
    error = grpc_error_through_envoy(own_stack, "/shellexec.v1.ShellExecService/GetSession")
    assert error.code() == grpc.StatusCode.UNAVAILABLE


def test_a_preflight_without_a_cors_policy_is_an_options_like_any_other(stack: Stack) -> None:
    # It reached the transcoder, which knows no OPTIONS: 404 on a known path.
    preflight = stack.api.request("OPTIONS", "/api/v1/task-sessions", headers={
        "origin": stack.rest_url, "access-control-request-method": "POST"})
    assert_json_error(preflight, 405, UNIMPLEMENTED)
    assert preflight.headers["allow"] == "GET, POST"
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_preflight_passes_the_405_routes(tmp_path: Path) -> None:
    origin = "http://page.example"
    stack = Stack(tmp_path, extra_env={"SHELLEXEC_CORS_ORIGINS": origin}).start()
    try:
        # The page's own origin is allowed, but not a CORS origin: no preflight to answer.
        own_origin = stack.api.request("OPTIONS", "/api/v1/task-sessions", headers={
            "origin": stack.rest_url, "access-control-request-method": "POST"})
        assert_json_error(own_origin, 405, UNIMPLEMENTED)
        preflight = stack.api.request("OPTIONS", "/api/v1/task-sessions", headers={
            "origin": origin, "access-control-request-method": "POST"})
        assert preflight.status == 200
        assert preflight.headers["access-control-allow-origin"] == origin
        deleting = stack.api.request("OPTIONS", "/api/v1/task-sessions/ses_x", headers={
            "origin": origin, "access-control-request-method": "DELETE"})
        assert deleting.status == 200
        assert "DELETE" in deleting.headers["access-control-allow-methods"]
        plain = stack.api.request("OPTIONS", "/api/v1/task-sessions")
        assert_json_error(plain, 405, UNIMPLEMENTED)
    finally:
        stack.stop()

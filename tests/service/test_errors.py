"""Bad input gets a clear error naming the field, loses nothing, and the service keeps
serving; unknown routes are 404 from Envoy, never 503."""

from __future__ import annotations

import pytest

from shellexec.client import ShellExecClient

from support.acp import codex_start
from support.stack import Stack


@pytest.mark.parametrize(("body", "field"), [
    ({"task_id": ""}, "task_id"),
    ({"task_id": "has space"}, "task_id"),
    ({"task_id": "ok", "agent": "x" * 65}, "agent"),
])
def test_create_session_rejects_bad_fields_naming_them(stack: Stack, body: dict[str, str],
                                                       field: str) -> None:
    response = stack.api.request("POST", "/api/v1/task-sessions", body)
    assert response.status == 400
    assert response.json()["message"].startswith(field)


@pytest.mark.parametrize(("update", "field"), [
    (None, "update"),
    ("a string", "update"),
    ([1, 2], "update"),
    ({"toolCallId": "x"}, "update.sessionUpdate"),
    ({"sessionUpdate": "tool_call"}, "update.toolCallId"),
    ({"sessionUpdate": "tool_call", "toolCallId": 7}, "update.toolCallId"),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "x" * 300}, "update.toolCallId"),
])
def test_publish_rejects_malformed_updates_naming_the_field(stack: Stack, update: object,
                                                            field: str) -> None:
    session = stack.api.new_session()
    body = {} if update is None else {"update": update}
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session['id']}/updates", body)
    assert response.status == 400, response.body
    assert response.json()["message"].startswith(field)
    assert stack.api.list_messages(session["id"])["total"] == 0


def test_publish_rejects_negative_sequence(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session['id']}/updates",
                                 {"update": codex_start("s", "ls"), "sequence": 0})
    assert response.status == 400
    assert response.json()["message"].startswith("sequence")


def test_oversized_update_is_refused_clearly_and_nothing_is_stored(stack: Stack) -> None:
    session = stack.api.new_session()
    update = codex_start("big", "cat huge")
    update["rawInput"]["blob"] = "x" * (5 * 1024 * 1024)
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session['id']}/updates",
                                 {"update": update})
    assert response.status == 400
    assert "limit" in response.json()["message"]
    assert stack.api.list_messages(session["id"])["total"] == 0
    stack.api.publish(session["id"], codex_start("small", "ls"))
    assert stack.api.list_messages(session["id"])["total"] == 1


def test_unknown_session_is_404(stack: Stack) -> None:
    response = stack.api.request("POST", "/api/v1/task-sessions/ses_nope/updates",
                                 {"update": codex_start("a", "ls")})
    assert response.status == 404
    assert stack.api.request("GET", "/api/v1/task-sessions/ses_nope/messages").status == 404
    assert stack.api.request("GET", "/api/v1/tasks/no-such-task/boot-state").status == 404


def test_unknown_turn_is_404_and_second_running_turn_is_refused(stack: Stack) -> None:
    session = stack.api.new_session()
    path = f"/api/v1/task-sessions/{session['id']}"
    assert stack.api.request("POST", f"{path}/turns/turn_nope:complete", {}).status == 404
    assert stack.api.request("POST", f"{path}/turns", {}).status == 200
    second = stack.api.request("POST", f"{path}/turns", {})
    assert second.status == 400
    assert "running turn" in second.json()["message"]


@pytest.mark.parametrize("path", [
    "/api/v1/nope",
    "/api/v2/task-sessions",
    "/definitely/not/here",
])
def test_unknown_routes_are_404_from_envoy_never_503(stack: Stack, path: str) -> None:
    assert stack.api.request("GET", path).status == 404


def test_unknown_query_parameter_is_400(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}/messages?bogus=1")
    assert response.status == 400


@pytest.mark.parametrize(("query", "field"), [
    ("?limit=-1", "limit"),
    ("?sort=sideways", "sort"),
    ("?before=a&after=b", "before"),
])
def test_list_rejects_bad_query_values_naming_them(stack: Stack, query: str,
                                                   field: str) -> None:
    session = stack.api.new_session()
    response = stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}/messages{query}")
    assert response.status == 400
    assert response.json()["message"].startswith(field)


def test_malformed_json_body_is_400_and_service_keeps_serving(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session['id']}/updates",
                                 raw=b'{"update": {')
    assert response.status == 400
    stack.api.publish(session["id"], codex_start("after-bad", "ls"))
    assert stack.api.list_messages(session["id"])["total"] == 1


# A command that starts with NUL weighs all of its bytes too (SQLite's length() of a text
# stops at the first NUL; the store weighs pages by their bytes, ADR 0133).
@pytest.mark.parametrize("start", ["echo ", "\x00echo "])
def test_huge_commands_are_bounded_and_pages_stay_within_their_size_cap(
        stack: Stack, client: ShellExecClient, start: str) -> None:
    session = client.create_session("huge-commands")
    huge = start + "x" * 300_000
    for index in range(9):
        client.publish(session.id, {"sessionUpdate": "tool_call", "toolCallId": f"h{index}",
                                    "kind": "execute", "rawInput": {"command": huge}})
    first = stack.api.request("GET", f"/api/v1/task-sessions/{session.id}/messages?limit=500")
    assert first.status == 200
    page = first.json()
    assert page["has_more"] is True
    assert 0 < len(page["messages"]) < 9
    assert all(len(m["content"].encode()) <= 262_144 for m in page["messages"])
    assert all(m["content"].startswith(start + "xxx") for m in page["messages"])
    rest = stack.api.request("GET", f"/api/v1/task-sessions/{session.id}/messages?limit=500"
                             f"&after={page['cursor']}").json()
    assert len(page["messages"]) + len(rest["messages"]) == 9
    assert stack.api.request("GET", "/api/v1/tasks/huge-commands/boot-state").status == 200



def test_normalize_bounds_a_huge_command_as_a_publish_stores_it(stack: Stack) -> None:
    """Normalize answered all 300,009 bytes of a command the stored message holds the first
    262,144 of: two answers for one update."""
    update = {"sessionUpdate": "tool_call", "toolCallId": "h", "kind": "execute",
              "rawInput": {"command": "echo " + "a" * 300_000 + " END"}}
    normalized = stack.api.request("POST", "/api/v1/shell-exec:normalize",
                                   {"updates": [update]}).json()
    session = stack.api.new_session()
    stored = stack.api.publish(session["id"], update)["message"]
    command = normalized["shell_exec"]["command"]
    assert command == stored["metadata"]["normalized"]["shell_exec"]["command"]
    assert command == "echo " + "a" * (262_144 - 5)


def test_request_body_over_8_mib_is_refused_by_envoy_with_413(stack: Stack) -> None:
    session = stack.api.new_session()
    body = b'{"update": {"sessionUpdate": "plan", "blob": "' + b"x" * (9 * 1024 * 1024) + b'"}}'
    response = stack.api.request("POST", f"/api/v1/task-sessions/{session['id']}/updates", raw=body)
    assert response.status == 413
    assert stack.api.list_messages(session["id"])["total"] == 0

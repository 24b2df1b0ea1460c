"""Publishing through Envoy's REST front door, and what browsers get back."""

from __future__ import annotations

import json

from support.acp import agent_text, codex_delta, codex_end, codex_start, opencode_running
from support.stack import Stack


def test_create_session_returns_server_assigned_id_and_idle_state(stack: Stack) -> None:
    session = stack.api.new_session(agent="claude")
    assert session["id"].startswith("ses_")
    assert session["agent"] == "claude"
    assert session["state"] == "idle"
    assert session["revision"] == 0


def test_tool_call_creates_tool_execute_message_with_summary_only(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.start_turn(session["id"])
    stack.api.publish(session["id"], codex_start("call_a", "make test"))
    stack.api.publish(session["id"], codex_delta("call_a", "building\n"))
    published = stack.api.publish(session["id"], codex_end("call_a", "building\nfailed\n", 4))

    message = published["message"]
    assert message["type"] == "tool_execute"
    assert message["author_type"] == "agent"
    assert message["content"] == "make test"
    assert message["metadata"]["status"] == "failed"
    shell = message["metadata"]["normalized"]["shell_exec"]
    assert message["metadata"]["normalized"]["kind"] == "shell_exec"
    assert shell["command"] == "make test"
    assert shell["work_dir"] == "/home/dev/proj"
    assert shell["output"] == {"exit_code": 4, "truncated": False, "has_output": True,
                               "stdout_bytes": len("building\nfailed\n"), "stderr_bytes": 0}


def test_message_list_never_carries_stdout_or_stderr(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("call_b", "cat big"))
    stack.api.publish(session["id"], codex_end("call_b", "SECRET-BODY\n", 0))
    raw = stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}/messages").body
    assert b"SECRET-BODY" not in raw
    assert b'"stdout"' not in raw
    assert b'"stderr"' not in raw
    assert json.loads(raw)["messages"][0]["metadata"]["normalized"]["shell_exec"]["output"][
        "has_output"] is True


def test_shell_output_returns_full_output_and_exit_code(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("call_c", "git status"))
    message = stack.api.publish(session["id"], codex_end("call_c", "clean\n", 0))["message"]
    body = stack.api.shell_output(session["id"], message["id"])
    assert body["message_id"] == message["id"]
    assert body["status"] == "complete"
    assert body["output"] == {"exit_code": 0, "stdout": "clean\n", "stderr": "",
                              "truncated": False}
    assert body["updated_at"].endswith("Z")


def test_shell_output_before_any_output_is_200_with_empty_output(stack: Stack) -> None:
    session = stack.api.new_session()
    message = stack.api.publish(session["id"], codex_start("call_d", "sleep 5"))["message"]
    body = stack.api.shell_output(session["id"], message["id"])
    assert body["status"] == "running"
    assert body["output"] == {"truncated": False}


def test_shell_output_is_404_alike_for_missing_cross_session_and_non_shell(stack: Stack) -> None:
    first, second = stack.api.new_session(), stack.api.new_session()
    shell = stack.api.publish(first["id"], codex_start("call_e", "ls"))["message"]
    text = stack.api.publish(first["id"], agent_text("hello"))["message"]
    paths = [
        f"/api/v1/task-sessions/{first['id']}/messages/msg_missing/shell-output",
        f"/api/v1/task-sessions/{second['id']}/messages/{shell['id']}/shell-output",
        f"/api/v1/task-sessions/{first['id']}/messages/{text['id']}/shell-output",
        f"/api/v1/task-sessions/ses_missing/messages/{shell['id']}/shell-output",
    ]
    answers = [stack.api.request("GET", path) for path in paths]
    assert [a.status for a in answers] == [404, 404, 404, 404]
    assert len({a.json()["message"].split("'")[0] for a in answers[:3]}) == 1


def test_statusless_update_with_output_persists_as_running(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], {"sessionUpdate": "tool_call", "toolCallId": "oc1",
                                      "title": "bash", "kind": "execute", "status": "pending",
                                      "rawInput": {"cwd": "/p"}})
    message = stack.api.publish(session["id"], codex_delta("oc1", "partial\n"))["message"]
    assert message["metadata"]["status"] == "running"
    assert stack.api.shell_output(session["id"], message["id"])["output"]["stdout"] == "partial\n"


def test_cumulative_snapshots_replace_and_never_duplicate(stack: Stack) -> None:
    session = stack.api.new_session(agent="opencode")
    stack.api.publish(session["id"], {"sessionUpdate": "tool_call", "toolCallId": "oc2",
                                      "title": "bash", "kind": "execute", "status": "pending",
                                      "rawInput": {"cwd": "/home/dev/proj"}})
    stack.api.publish(session["id"], opencode_running("oc2", "ls", "a\n"))
    stack.api.publish(session["id"], opencode_running("oc2", "ls", "a\nb\n"))
    message = stack.api.publish(session["id"], opencode_running("oc2", "ls", "a\nb\n"))["message"]
    assert stack.api.shell_output(session["id"], message["id"])["output"]["stdout"] == "a\nb\n"


def test_agent_message_chunks_append_to_one_text_message(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.start_turn(session["id"])
    stack.api.publish(session["id"], agent_text("Hello, "))
    stack.api.publish(session["id"], agent_text("world."))
    messages = stack.api.list_messages(session["id"])["messages"]
    assert [(m["type"], m["author_type"], m["content"]) for m in messages] == [
        ("message", "agent", "Hello, world.")]


def test_unknown_update_types_are_accepted_and_ignored(stack: Stack) -> None:
    session = stack.api.new_session()
    result = stack.api.publish(session["id"], {"sessionUpdate": "plan", "entries": []})
    assert "message" not in result
    assert stack.api.list_messages(session["id"])["total"] == 0


def test_list_pages_with_limit_before_after_and_sort(stack: Stack) -> None:
    session = stack.api.new_session()
    ids = [stack.api.publish(session["id"], codex_start(f"p{i}", f"echo {i}"))["message"]["id"]
           for i in range(5)]
    first = stack.api.list_messages(session["id"], "?limit=2")
    assert [m["id"] for m in first["messages"]] == ids[:2]
    assert first["total"] == 5
    assert first["has_more"] is True
    assert first["cursor"] == ids[1]
    second = stack.api.list_messages(session["id"], f"?limit=2&after={first['cursor']}")
    assert [m["id"] for m in second["messages"]] == ids[2:4]
    newest = stack.api.list_messages(session["id"], "?limit=2&sort=desc")
    assert [m["id"] for m in newest["messages"]] == [ids[4], ids[3]]
    older = stack.api.list_messages(session["id"], f"?sort=desc&before={ids[3]}")
    assert [m["id"] for m in older["messages"]] == [ids[2], ids[1], ids[0]]
    assert older["has_more"] is False


def test_agent_sessions_alias_lists_the_same_messages(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("alias1", "pwd"))
    via_alias = stack.api.request("GET", f"/api/v1/agent-sessions/{session['id']}/messages").json()
    assert via_alias == stack.api.list_messages(session["id"])


def test_boot_state_returns_latest_session_and_summaries(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("boot1", "make"))
    stack.api.publish(session["id"], codex_end("boot1", "BOOT-BODY\n", 0))
    response = stack.api.request("GET", f"/api/v1/tasks/{session['task_id']}/boot-state")
    assert response.status == 200
    assert b"BOOT-BODY" not in response.body
    state = response.json()["initial_state"]
    assert state["session"]["id"] == session["id"]
    assert [m["content"] for m in state["messages"]] == ["make"]
    assert state["messages"][0]["metadata"]["normalized"]["shell_exec"]["output"][
        "stdout_bytes"] == len("BOOT-BODY\n")

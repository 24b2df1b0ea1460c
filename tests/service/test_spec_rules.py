"""Rules of the specification visible to users that no scenario test pinned on its own (see the
coverage table in docs/spec-summary.md), through Envoy's REST front door."""

from __future__ import annotations

from support.acp import codex_start
from support.stack import Stack


def test_codex_classic_shell_result_shows_stderr_once(stack: Stack) -> None:
    # The combined formatted_output is authoritative and already holds stderr (ADR 0130).
    session = stack.api.new_session(agent="codex")
    combined = "cc -c main.c\nmain.c:3: error: expected ';'\n"
    end = {"sessionUpdate": "tool_call_update", "toolCallId": "cls", "status": "failed",
           "rawOutput": {"stdout": "cc -c main.c\n", "stderr": "main.c:3: error: expected ';'\n",
                         "aggregated_output": combined, "formatted_output": combined,
                         "exit_code": 2},
           "_meta": {"terminal_exit": {"terminal_id": "cls", "exit_code": 2, "signal": None}}}
    message_id = stack.api.play(session["id"], [codex_start("cls", "make"), end])
    shown = stack.api.shell_output(session["id"], message_id)
    assert shown["output"] == {"exit_code": 2, "stdout": combined, "stderr": "",
                               "truncated": False}
    assert stack.api.shell_exec(session["id"], message_id)["output"] == {
        "exit_code": 2, "truncated": False, "has_output": True,
        "stdout_bytes": len(combined), "stderr_bytes": 0}


def test_projection_leaves_the_stored_output_as_it_was(stack: Stack) -> None:
    # Spec: "Projection does not mutate the persisted message metadata": after every browser
    # payload was built from it, the shell output is still the whole body.
    session = stack.api.new_session(agent="opencode")
    body = "checking\n2 problems found\n"
    message_id = stack.api.play(session["id"], [
        {"sessionUpdate": "tool_call", "toolCallId": "prj", "title": "bash", "kind": "execute",
         "status": "pending", "rawInput": {"cwd": "/proj"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "prj", "status": "completed",
         "title": "./lint.sh", "rawInput": {"command": "./lint.sh", "cwd": "/proj"},
         "rawOutput": {"output": body, "metadata": {"output": body, "exit": 1}}},
    ])
    first = stack.api.shell_exec(session["id"], message_id)
    stack.api.request("GET", f"/api/v1/tasks/{session['task_id']}/boot-state")
    feed = stack.api.watch(session["id"], "?since_revision=0")
    events = [next(feed) for _ in range(3)]
    feed.close()
    assert [event["type"] for event in events][1:] == [
        "session.message.added", "session.message.updated"]
    assert stack.api.shell_output(session["id"], message_id)["output"] == {
        "exit_code": 1, "stdout": body, "truncated": False}
    assert stack.api.shell_exec(session["id"], message_id) == first
    assert first["output"]["stdout_bytes"] == len(body)


def test_failed_call_without_exit_code_is_ended_and_not_cancelled_by_the_turn(
        stack: Stack) -> None:
    # Spec: ACP failed terminates active-call tracking even when no exit code is available.
    session = stack.api.new_session(agent="claude")
    turn = stack.api.start_turn(session["id"])
    message_id = stack.api.play(session["id"], [
        {"sessionUpdate": "tool_call", "toolCallId": "fnx", "title": "Terminal",
         "kind": "execute", "status": "pending", "rawInput": {}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "fnx", "title": "./deploy.sh",
         "rawInput": {"command": "./deploy.sh"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "fnx", "status": "failed",
         "rawOutput": "deploy: permission denied"},
    ])
    completed = stack.api.complete_turn(session["id"], turn, "cancelled")
    assert completed["cancelled_message_ids"] == []
    shown = stack.api.shell_output(session["id"], message_id)
    assert shown["status"] == "failed"
    assert shown["output"] == {"stdout": "deploy: permission denied", "truncated": False}
    assert "exit_code" not in stack.api.shell_exec(session["id"], message_id)["output"]

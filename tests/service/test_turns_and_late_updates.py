"""Turn rules: completing a turn cancels running commands and keeps their transcript; a late
terminal update reconciles the message without opening a turn or waking session or task; a
task runs while any of its sessions does."""

from __future__ import annotations

from support.acp import codex_delta, codex_end, codex_start
from support.stack import Stack


def test_start_turn_makes_session_running_and_complete_makes_it_idle(stack: Stack) -> None:
    session = stack.api.new_session()
    turn = stack.api.start_turn(session["id"])
    assert stack.api.session(session["id"])["state"] == "running"
    completed = stack.api.complete_turn(session["id"], turn)
    assert completed["turn"]["state"] == "complete"
    assert completed["turn"]["stop_reason"] == "end_turn"
    assert stack.api.session(session["id"])["state"] == "idle"


def _task_state(stack: Stack, task_id: str) -> str:
    response = stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state")
    assert response.status == 200, response.body
    return str(response.json()["initial_state"]["task_state"])


def test_task_runs_while_any_of_its_sessions_has_a_running_turn(stack: Stack) -> None:
    first = stack.api.new_session()
    task_id = first["task_id"]
    second = stack.api.request("POST", "/api/v1/task-sessions",
                               {"task_id": task_id, "agent": "claude"}).json()["session"]
    assert _task_state(stack, task_id) == "idle"
    first_turn, second_turn = stack.api.start_turn(first["id"]), stack.api.start_turn(second["id"])
    assert _task_state(stack, task_id) == "running"

    stack.api.complete_turn(first["id"], first_turn)
    assert stack.api.session(first["id"])["state"] == "idle"
    assert _task_state(stack, task_id) == "running"

    stack.api.complete_turn(second["id"], second_turn)
    assert _task_state(stack, task_id) == "idle"


def test_complete_turn_cancels_running_command_keeping_transcript(stack: Stack) -> None:
    session = stack.api.new_session()
    turn = stack.api.start_turn(session["id"])
    message = stack.api.publish(session["id"], codex_start("run1", "npm test"))["message"]
    stack.api.publish(session["id"], codex_delta("run1", "test 1 ok\n"))
    done = stack.api.publish(session["id"], codex_start("done1", "ls"))["message"]
    stack.api.publish(session["id"], codex_end("done1", "a\n", 0))

    completed = stack.api.complete_turn(session["id"], turn, "cancelled")
    assert completed["cancelled_message_ids"] == [message["id"]]
    body = stack.api.shell_output(session["id"], message["id"])
    assert body["status"] == "cancelled"
    assert body["output"] == {"stdout": "test 1 ok\n", "truncated": False}
    assert stack.api.shell_output(session["id"], done["id"])["status"] == "complete"
    listed = {m["id"]: m for m in stack.api.list_messages(session["id"])["messages"]}
    summary = listed[message["id"]]["metadata"]["normalized"]["shell_exec"]["output"]
    assert summary["has_output"] is True
    assert "exit_code" not in summary


def test_completing_a_completed_turn_changes_nothing(stack: Stack) -> None:
    session = stack.api.new_session()
    turn = stack.api.start_turn(session["id"])
    stack.api.complete_turn(session["id"], turn, "end_turn")
    again = stack.api.complete_turn(session["id"], turn, "other")
    assert again["turn"]["stop_reason"] == "end_turn"


def test_late_terminal_update_reconciles_without_opening_turn_or_waking_session(
        stack: Stack) -> None:
    session = stack.api.new_session()
    turn = stack.api.start_turn(session["id"])
    message = stack.api.publish(session["id"], codex_start("late1", "make build"))["message"]
    stack.api.publish(session["id"], codex_delta("late1", "compiling\n"))
    stack.api.complete_turn(session["id"], turn)
    before = stack.api.session(session["id"])

    late = stack.api.publish(session["id"], codex_end("late1", "compiling\ndone\n", 0))["message"]

    assert late["id"] == message["id"]
    assert late["turn_id"] == turn
    assert late["metadata"]["status"] == "complete"
    after = stack.api.session(session["id"])
    assert after["state"] == "idle"
    assert after["updated_at"] == before["updated_at"]
    assert stack.api.shell_output(session["id"], message["id"])["output"] == {
        "exit_code": 0, "stdout": "compiling\ndone\n", "stderr": "", "truncated": False}
    assert stack.api.list_messages(session["id"])["total"] == 1
    task = stack.api.request("GET", f"/api/v1/tasks/{session['task_id']}/boot-state").json()
    assert task["initial_state"]["session"]["state"] == "idle"
    assert task["initial_state"]["task_state"] == "idle"


def test_publish_with_same_sequence_is_idempotent(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("seq1", "tail log"), sequence=1)
    first = stack.api.publish(session["id"], codex_delta("seq1", "line\n"), sequence=2)
    retried = stack.api.publish(session["id"], codex_delta("seq1", "line\n"), sequence=2)
    assert retried["duplicate"] is True
    assert first["duplicate"] is False
    assert retried["message"]["id"] == first["message"]["id"]
    stored = stack.api.shell_output(session["id"], first["message"]["id"])
    assert stored["output"]["stdout"] == "line\n"

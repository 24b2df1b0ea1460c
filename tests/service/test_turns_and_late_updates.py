"""Turn rules: completing a turn cancels running commands and keeps their transcript; a late
terminal update reconciles the message without opening a turn or waking session or task; a
task runs while any of its sessions does."""

from __future__ import annotations

from support.acp import codex_delta, codex_end, codex_start
from support.rest import (
    complete_turn,
    list_messages,
    new_session,
    publish,
    session_state,
    snapshot,
    start_turn,
)
from support.stack import Stack


def test_start_turn_makes_session_running_and_complete_makes_it_idle(stack: Stack) -> None:
    session = new_session(stack)
    turn = start_turn(stack, session["id"])
    assert session_state(stack, session["id"])["state"] == "running"
    completed = complete_turn(stack, session["id"], turn)
    assert completed["turn"]["state"] == "complete"  # type: ignore[index]
    assert completed["turn"]["stop_reason"] == "end_turn"  # type: ignore[index]
    assert session_state(stack, session["id"])["state"] == "idle"


def _task_state(stack: Stack, task_id: str) -> str:
    response = stack.rest("GET", f"/api/v1/tasks/{task_id}/boot-state")
    assert response.status == 200, response.body
    return str(response.json()["initial_state"]["task_state"])


def test_task_runs_while_any_of_its_sessions_has_a_running_turn(stack: Stack) -> None:
    first = new_session(stack)
    task_id = first["task_id"]
    second = stack.rest("POST", "/api/v1/task-sessions",
                        {"task_id": task_id, "agent": "claude"}).json()["session"]
    assert _task_state(stack, task_id) == "idle"
    first_turn, second_turn = start_turn(stack, first["id"]), start_turn(stack, second["id"])
    assert _task_state(stack, task_id) == "running"

    complete_turn(stack, first["id"], first_turn)
    assert session_state(stack, first["id"])["state"] == "idle"
    assert _task_state(stack, task_id) == "running"

    complete_turn(stack, second["id"], second_turn)
    assert _task_state(stack, task_id) == "idle"


def test_complete_turn_cancels_running_command_keeping_transcript(stack: Stack) -> None:
    session = new_session(stack)
    turn = start_turn(stack, session["id"])
    message = publish(stack, session["id"], codex_start("run1", "npm test"))["message"]
    publish(stack, session["id"], codex_delta("run1", "test 1 ok\n"))
    done = publish(stack, session["id"], codex_start("done1", "ls"))["message"]
    publish(stack, session["id"], codex_end("done1", "a\n", 0))

    completed = complete_turn(stack, session["id"], turn, "cancelled")
    assert completed["cancelled_message_ids"] == [message["id"]]
    body = snapshot(stack, session["id"], message["id"])
    assert body["status"] == "cancelled"
    assert body["output"] == {"stdout": "test 1 ok\n", "truncated": False}
    assert snapshot(stack, session["id"], done["id"])["status"] == "complete"
    listed = {m["id"]: m for m in list_messages(stack, session["id"])["messages"]}
    summary = listed[message["id"]]["metadata"]["normalized"]["shell_exec"]["output"]
    assert summary["has_output"] is True
    assert "exit_code" not in summary


def test_completing_a_completed_turn_changes_nothing(stack: Stack) -> None:
    session = new_session(stack)
    turn = start_turn(stack, session["id"])
    complete_turn(stack, session["id"], turn, "end_turn")
    again = complete_turn(stack, session["id"], turn, "other")
    assert again["turn"]["stop_reason"] == "end_turn"  # type: ignore[index]


def test_late_terminal_update_reconciles_without_opening_turn_or_waking_session(
        stack: Stack) -> None:
    session = new_session(stack)
    turn = start_turn(stack, session["id"])
    message = publish(stack, session["id"], codex_start("late1", "make build"))["message"]
    publish(stack, session["id"], codex_delta("late1", "compiling\n"))
    complete_turn(stack, session["id"], turn)
    before = session_state(stack, session["id"])

    late = publish(stack, session["id"], codex_end("late1", "compiling\ndone\n", 0))["message"]

    assert late["id"] == message["id"]
    assert late["turn_id"] == turn
    assert late["metadata"]["status"] == "complete"
    after = session_state(stack, session["id"])
    assert after["state"] == "idle"
    assert after["updated_at"] == before["updated_at"]
    assert snapshot(stack, session["id"], message["id"])["output"] == {
        "exit_code": 0, "stdout": "compiling\ndone\n", "stderr": "", "truncated": False}
    assert list_messages(stack, session["id"])["total"] == 1
    task = stack.rest("GET", f"/api/v1/tasks/{session['task_id']}/boot-state").json()
    assert task["initial_state"]["session"]["state"] == "idle"
    assert task["initial_state"]["task_state"] == "idle"


def test_publish_with_same_sequence_is_idempotent(stack: Stack) -> None:
    session = new_session(stack)
    publish(stack, session["id"], codex_start("seq1", "tail log"), sequence=1)
    first = publish(stack, session["id"], codex_delta("seq1", "line\n"), sequence=2)
    retried = publish(stack, session["id"], codex_delta("seq1", "line\n"), sequence=2)
    assert retried["duplicate"] is True
    assert first["duplicate"] is False
    assert retried["message"]["id"] == first["message"]["id"]
    assert snapshot(stack, session["id"], first["message"]["id"])["output"]["stdout"] == "line\n"

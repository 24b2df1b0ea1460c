"""REST calls through Envoy that many tests make, asserting success (HTTP 200)."""

from __future__ import annotations

import uuid
from typing import Any

from support.stack import Stack


def new_session(stack: Stack, agent: str = "codex") -> dict[str, Any]:
    task = f"task-{uuid.uuid4().hex[:12]}"
    response = stack.rest("POST", "/api/v1/task-sessions", {"task_id": task, "agent": agent})
    assert response.status == 200, response.body
    session: dict[str, Any] = response.json()["session"]
    return session


def start_turn(stack: Stack, session_id: str) -> str:
    response = stack.rest("POST", f"/api/v1/task-sessions/{session_id}/turns", {})
    assert response.status == 200, response.body
    return str(response.json()["turn"]["id"])


def publish(stack: Stack, session_id: str, update: dict[str, Any],
            sequence: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"update": update}
    if sequence is not None:
        body["sequence"] = sequence
    response = stack.rest("POST", f"/api/v1/task-sessions/{session_id}/updates", body)
    assert response.status == 200, response.body
    result: dict[str, Any] = response.json()
    return result


def list_messages(stack: Stack, session_id: str, query: str = "") -> dict[str, Any]:
    response = stack.rest("GET", f"/api/v1/task-sessions/{session_id}/messages{query}")
    assert response.status == 200, response.body
    result: dict[str, Any] = response.json()
    return result


def snapshot(stack: Stack, session_id: str, message_id: str) -> dict[str, Any]:
    response = stack.rest(
        "GET", f"/api/v1/task-sessions/{session_id}/messages/{message_id}/shell-output")
    assert response.status == 200, response.body
    result: dict[str, Any] = response.json()
    return result


def complete_turn(stack: Stack, session_id: str, turn_id: str,
                  stop_reason: str = "end_turn") -> dict[str, object]:
    response = stack.rest(
        "POST", f"/api/v1/task-sessions/{session_id}/turns/{turn_id}:complete",
        {"stop_reason": stop_reason})
    assert response.status == 200, response.body
    result: dict[str, object] = response.json()
    return result


def session_state(stack: Stack, session_id: str) -> dict[str, object]:
    body: dict[str, object] = stack.rest("GET", f"/api/v1/task-sessions/{session_id}").json()[
        "session"]
    return body

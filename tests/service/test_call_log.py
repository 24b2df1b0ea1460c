"""Every call leaves one JSON line in the server's log (stderr, the stack's server.log): time,
request id, method, status, duration, session id; never output, updates or tokens.
`SHELLEXEC_LOG` chooses every call, the failed ones, or none (docs/operations.md, "Logs")."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from shellexec.client import ShellExecClient

from support.acp import agent_text
from support.stack import Stack

SECRET_OUTPUT = "printed-AKIA-secret-output"
SECRET_TOKEN = "Bearer tok-very-secret"
RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
SERVICE = "/shellexec.v1.ShellExecService/"


def logged(stack: Stack) -> list[dict[str, Any]]:
    text = (stack.workdir / "server.log").read_text()
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def of_session(stack: Stack, session_id: str) -> list[dict[str, Any]]:
    return [line for line in logged(stack) if line.get("session_id") == session_id]


def test_every_call_is_one_json_line_without_what_the_caller_sent(stack: Stack) -> None:
    secret = {"authorization": SECRET_TOKEN}
    created = stack.api.request("POST", "/api/v1/task-sessions", {"task_id": "logged"},
                                headers=secret).json()["session"]
    session_id = created["id"]
    path = f"/api/v1/task-sessions/{session_id}/updates"
    assert stack.api.request("POST", path, {"update": agent_text(SECRET_OUTPUT), "sequence": 1},
                             headers=secret).status == 200
    assert stack.api.request("POST", path, {"update": agent_text("other"), "sequence": 1}
                             ).status == 409
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session_id}/messages?limit=abc"
                             ).status == 400  # refused by Envoy: the server never sees it

    lines = of_session(stack, session_id)
    assert [(line["method"], line["status"]) for line in lines] == [
        (SERVICE + "CreateSession", "OK"), (SERVICE + "PublishUpdate", "OK"),
        (SERVICE + "PublishUpdate", "ALREADY_EXISTS")]
    for line in lines:
        assert set(line) == {"time", "request_id", "method", "status", "duration_ms",
                             "session_id"}
        assert RFC3339_UTC.fullmatch(line["time"]), line["time"]
        assert isinstance(line["duration_ms"], float)
        assert line["duration_ms"] >= 0
        assert len(line["request_id"]) == 36  # Envoy's x-request-id
    assert len({line["request_id"] for line in lines}) == 3
    everything = (stack.workdir / "server.log").read_text()
    assert SECRET_OUTPUT not in everything
    assert "tok-very-secret" not in everything


def test_a_publish_refused_before_its_update_is_read_still_names_its_session(
        stack: Stack) -> None:
    session_id = stack.api.new_session()["id"]
    path = f"/api/v1/task-sessions/{session_id}/updates"
    # Refused by validation, before the servicer has a parsed request to take the id from.
    assert stack.api.request("POST", path, {"update": agent_text("x"), "sequence": 0}
                             ).status == 400

    assert [(line["method"], line["status"]) for line in of_session(stack, session_id)
            if line["method"] == SERVICE + "PublishUpdate"] == [
        (SERVICE + "PublishUpdate", "INVALID_ARGUMENT")]


def test_a_session_id_the_server_could_not_have_made_is_not_logged(stack: Stack) -> None:
    odd = "ses_" + "Z" * 40 + SECRET_OUTPUT
    assert stack.api.request("GET", f"/api/v1/task-sessions/{odd}").status == 404

    assert SECRET_OUTPUT not in (stack.workdir / "server.log").read_text()


def test_a_direct_grpc_call_gets_a_new_request_id(stack: Stack, client: ShellExecClient
                                                  ) -> None:
    session_id = client.create_session("direct", "codex").id

    [line] = of_session(stack, session_id)
    assert line["method"] == SERVICE + "CreateSession"
    assert re.fullmatch(r"[0-9a-f]{32}", line["request_id"])


@pytest.mark.slow  # starts stacks of its own
@pytest.mark.parametrize(("level", "statuses"), [
    ("errors", ["NOT_FOUND"]),
    ("off", []),
])
def test_the_log_setting_chooses_which_calls_are_written(
        stack_with: Callable[..., Stack], level: str, statuses: list[str]) -> None:
    own = stack_with(SHELLEXEC_LOG=level)
    session_id = own.api.new_session()["id"]
    own.api.publish(session_id, agent_text("hi"))
    assert own.api.request("GET", "/api/v1/task-sessions/ses_" + "0" * 32).status == 404

    assert [line["status"] for line in logged(own)
            if line["method"].startswith(SERVICE)] == statuses


@pytest.mark.slow  # a feed stream that lasts its (short) lifetime
def test_a_stream_is_logged_when_it_ends_with_its_duration(
        stack_with: Callable[..., Stack]) -> None:
    own = stack_with(SHELLEXEC_STREAM_LIFETIME_SECONDS="1")
    session_id = own.api.new_session()["id"]
    events = list(own.api.watch(session_id, "?since_revision=0"))

    assert events[-1]["type"] == "end_of_stream"
    [line] = [line for line in of_session(own, session_id)
              if line["method"] == SERVICE + "WatchMessages"]
    assert line["status"] == "OK"
    assert line["duration_ms"] >= 1000  # the stream's lifetime

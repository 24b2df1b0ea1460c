"""The OpenAPI document (docs/openapi.json, ADR 0109): Envoy serves the checked-in file, and
what the fuzz test cannot reach, the endless watch route, answers as the document says."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from shellexec.app.openapi_document import EVENT_STREAM, OPENAPI_PATH, WATCH_PATH
from shellexec.demo.rest import RestError

from support.stack import Stack

DOCUMENT_FILE = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
DOCUMENT: dict[str, Any] = json.loads(DOCUMENT_FILE.read_text())
WATCH = DOCUMENT["paths"][WATCH_PATH]["get"]


def _validator(schema: dict[str, Any]) -> jsonschema_rs.Draft4Validator:
    """A validator of `schema`, its references resolved against the document's definitions."""
    return jsonschema_rs.Draft4Validator({**schema, "definitions": DOCUMENT["definitions"]})


def test_envoy_serves_the_checked_in_document_before_the_transcoder(stack: Stack) -> None:
    answer = stack.api.request("GET", OPENAPI_PATH)
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.body == DOCUMENT_FILE.read_bytes()
    # The browser boundary's security headers are on this answer too.
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_the_browser_boundary_comes_first(stack: Stack) -> None:
    foreign = stack.api.request("GET", OPENAPI_PATH, headers={"origin": "http://evil.example"})
    assert foreign.status == 403


def test_the_document_accepts_no_other_method(stack: Stack) -> None:
    answer = stack.api.request("POST", OPENAPI_PATH, {})
    assert answer.status == 405
    assert answer.headers["allow"] == "GET, HEAD"
    assert answer.json()["code"] == 12  # UNIMPLEMENTED, as every 405 of the front door


def test_watch_events_have_the_documented_shape(stack: Stack) -> None:
    session = stack.api.new_session()
    turn = stack.api.start_turn(session["id"])
    stack.api.publish(session["id"], {"sessionUpdate": "agent_message_chunk",
                                      "content": {"type": "text", "text": "hello"}})
    stack.api.complete_turn(session["id"], turn)
    assert WATCH["produces"][0] == EVENT_STREAM
    event_schema = _validator(WATCH["responses"]["200"]["schema"]["x-event-data"])
    # stack.api.watch reads `data:` lines of a text/event-stream answer (it refuses others).
    events = stack.api.watch(session["id"], "?since_revision=0")
    try:
        first_message_event = next(event for event in islice(events, 50) if "message" in event)
    finally:
        events.close()
    event_schema.validate(first_message_event)
    assert first_message_event["message"]["content"] == "hello"


def test_a_watch_refused_before_any_event_is_the_documented_error(stack: Stack) -> None:
    session = stack.api.new_session()
    with pytest.raises(RestError) as refused:
        next(stack.api.watch(session["id"], "?since_revision=99"))
    assert refused.value.response is not None
    assert str(refused.value.response.status) in WATCH["responses"]
    error = refused.value.response.json()
    _validator(WATCH["responses"]["400"]["schema"]).validate(error)
    assert error["details"], "the server's errors carry details"


def _parameter(path: str, name: str) -> dict[str, Any]:
    operation = next(iter(DOCUMENT["paths"][path].values()))
    found: dict[str, Any] = next(p for p in operation["parameters"] if p["name"] == name)
    return found


@pytest.mark.parametrize(("definition", "body"), [
    ("ShellExecServicePublishUpdateBody", {"update": None}),
    ("ShellExecServicePublishUpdateBody", {"update": {"sessionUpdate": ""}}),
    ("ShellExecServicePublishUpdateBody", {"update": {"sessionUpdate": "x"}, "sequence": 0}),
    ("ShellExecServicePublishUpdateBody", {"update": {"sessionUpdate": "x"}, "sequence": 2**63}),
    ("v1CreateSessionRequest", {"task_id": ""}),
    ("v1CreateSessionRequest", {"task_id": "t", "request_id": "no spaces"}),
    ("v1NormalizeShellExecRequest", {"updates": []}),
])
def test_the_document_refuses_bodies_the_server_refuses(definition: str,
                                                        body: dict[str, Any]) -> None:
    assert not _validator({"$ref": f"#/definitions/{definition}"}).is_valid(body)


@pytest.mark.parametrize("sequence", [1, 7, 2**63 - 1])
def test_the_document_accepts_a_sequence_as_the_contract_sends_it(sequence: int) -> None:
    """The contract sends `sequence` as a JSON number; the document asked for a string (proto3
    JSON's form of int64), so a validator built from it refused every documented publish."""
    body = {"update": {"sessionUpdate": "x"}, "sequence": sequence}
    assert _validator({"$ref": "#/definitions/ShellExecServicePublishUpdateBody"}).is_valid(body)


def _parameter_schema(path: str, name: str) -> dict[str, Any]:
    parameter = _parameter(path, name)
    return {key: parameter[key] for key in ("type", "minimum", "pattern") if key in parameter}


@pytest.mark.parametrize(("path", "name", "value"), [
    ("/api/v1/task-sessions/{session_id}/messages", "after", "msg_" + "0" * 32),
    ("/api/v1/task-sessions", "after", "ses_" + "0" * 32),
    ("/api/v1/task-sessions", "before", ""),
])
def test_the_document_accepts_cursors_the_server_accepts(path: str, name: str,
                                                          value: object) -> None:
    """List sessions' cursors are session ids, which the document refused as message ids."""
    assert _validator(_parameter_schema(path, name)).is_valid(value)


@pytest.mark.parametrize(("path", "name", "value"), [
    ("/api/v1/task-sessions/{session_id}/messages", "limit", -1),
    ("/api/v1/task-sessions", "after", "msg_" + "0" * 32),
    ("/api/v1/task-sessions/{session_id}/messages", "after", "not-a-message-id"),
    ("/api/v1/task-sessions/{session_id}", "session_id", ""),
    ("/api/v1/tasks/{task_id}/boot-state", "task_id", "a/b"),
])
def test_the_document_refuses_parameters_the_server_refuses(path: str, name: str,
                                                            value: object) -> None:
    assert not _validator(_parameter_schema(path, name)).is_valid(value)

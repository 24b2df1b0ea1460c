"""The path names the resource: on every REST route with a path parameter (read from the
proto's HTTP rules, so a new route is covered too), a body field or a query parameter naming
another session, turn, message or task than the path's is refused with 400 naming the field,
and the other resource is left as it was. The query may name the field by its proto name, its
JSON name or a percent-encoded name, and the body may give its key twice (ADR 0146)."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import pytest

from shellexec.app.envoy import DESCRIPTOR
from shellexec.app.rest_bindings import RestBinding, read_bindings

from support.acp import codex_start
from support.rest import unique
from support.stack import Stack

BINDINGS = [b for b in read_bindings(DESCRIPTOR) if b.template.variables]
# A body each method would accept apart from the colliding field, so a collision that got
# through would succeed rather than fail for another reason.
BODIES: dict[str, dict[str, Any]] = {
    "PublishUpdate": {"update": codex_start("collide", "echo collided")},
    "CompleteTurn": {"stop_reason": "end_turn"},
}


def resources(stack: Stack) -> dict[str, str]:
    """A task with a session, a running turn and a shell message: each path field's value."""
    task_id = unique("task")
    session_id = stack.api.create_session(task_id, "codex")["id"]
    turn_id = stack.api.start_turn(session_id)
    message_id = stack.api.play(session_id, [codex_start("c1", "ls")])
    return {"task_id": task_id, "session_id": session_id, "turn_id": turn_id,
            "message_id": message_id}


def path_of(binding: RestBinding, values: dict[str, str]) -> str:
    path = binding.template.text
    for field in binding.template.variables:
        path = path.replace("{" + field + "}", values[field])
    return path


def case_id(case: tuple[RestBinding, str, str]) -> str:
    binding, field, where = case
    return f"{binding.method} {binding.template.text} {where} {field}"


# Where the other resource is named: the envoy routes refuse the first two, the server the
# rest (the transcoder fills a field from its JSON name or a percent-encoded name too, and
# keeps the last of a body's repeated keys while Envoy's collision check reads the first).
QUERY_FORMS = ("query", "json-name query", "encoded query")
BODY_FORMS = ("body", "repeated body key")
CASES = [(binding, field, where) for binding in BINDINGS for field in binding.template.variables
         for where in (BODY_FORMS + QUERY_FORMS if binding.method == "POST" else QUERY_FORMS)]


def _json_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(word.capitalize() for word in rest)


def _query(where: str, field: str, value: str) -> str:
    name = {"query": field, "json-name query": _json_name(field),
            "encoded query": urllib.parse.quote(field, safe="").replace("_", "%5F")}[where]
    return f"?{name}={urllib.parse.quote(value)}"


def _body_repeating(body: dict[str, Any], field: str, first: str, last: str) -> bytes:
    """`body` with `field` given twice, `first` then `last`: JSON that no encoder writes."""
    pairs = [json.dumps(key) + ":" + json.dumps(value) for key, value in
             [*body.items(), (field, first), (field, last)]]
    return ("{" + ",".join(pairs) + "}").encode()


def test_every_route_with_a_path_parameter_is_covered() -> None:
    assert {b.template.text for b, _, _ in CASES} == {b.template.text for b in BINDINGS}
    assert len({b.template.text for b in BINDINGS}) >= 8


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_field_naming_another_resource_than_the_path_is_400(
        stack: Stack, case: tuple[RestBinding, str, str]) -> None:
    binding, field, where = case
    mine, theirs = resources(stack), resources(stack)
    their_messages = stack.api.messages(theirs["session_id"])
    path = path_of(binding, mine)
    body: dict[str, Any] | None = ({**BODIES.get(binding.rpc.rsplit(".", 1)[-1], {})}
                                   if binding.method == "POST" else None)
    raw = None
    if where == "body":
        assert body is not None
        body[field] = theirs[field]
    elif where == "repeated body key":
        assert body is not None
        raw = _body_repeating(body, field, mine[field], theirs[field])
    else:
        path += _query(where, field, theirs[field])

    response = stack.api.request(binding.method, path, body, raw=raw)

    assert response.status == 400, (path, response.body[:300])
    assert response.json()["code"] == 3
    assert field in response.json()["message"]
    assert stack.api.messages(theirs["session_id"]) == their_messages
    assert stack.api.session(theirs["session_id"])["current_turn_id"] == theirs["turn_id"]


def _every_character_escaped(text: str) -> str:
    return "".join(f"%{byte:02X}" for byte in text.encode())


@pytest.mark.parametrize(("task_id", "spelled"), [
    ("colon:and.dots-and_underscores", "colon:and.dots-and_underscores"),
    ("escaped-needlessly", _every_character_escaped("escaped-needlessly")),
    ("partly.escaped", "part%6Cy.escaped"),
])
def test_a_task_id_spelled_with_escapes_in_the_path_still_names_its_task(
        stack: Stack, task_id: str, spelled: str) -> None:
    """The server compares the path's segment as the transcoder may have unescaped it: a task
    id whose characters the path escapes is not taken for another."""
    suffix = unique("")  # a fresh task each run
    session_id = stack.api.create_session(task_id + suffix, "codex")["id"]
    response = stack.api.request("GET", f"/api/v1/tasks/{spelled}{suffix}/boot-state")
    assert response.status == 200, response.body[:300]
    assert response.json()["initial_state"]["session"]["id"] == session_id

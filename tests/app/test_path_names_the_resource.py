"""The path names the resource: on every REST route with a path parameter (read from the
proto's HTTP rules, so a new route is covered too), a body field or a query parameter naming
another session, turn, message or task than the path's is refused with 400 naming the field,
and the other resource is left as it was."""

from __future__ import annotations

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


CASES = [(binding, field, where) for binding in BINDINGS for field in binding.template.variables
         for where in (("body", "query") if binding.method == "POST" else ("query",))]


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
    if where == "body":
        assert body is not None
        body[field] = theirs[field]
    else:
        path += f"?{field}={theirs[field]}"

    response = stack.api.request(binding.method, path, body)

    assert response.status == 400, (path, response.body[:300])
    assert response.json()["code"] == 3
    assert field in response.json()["message"]
    assert stack.api.messages(theirs["session_id"]) == their_messages
    assert stack.api.session(theirs["session_id"])["current_turn_id"] == theirs["turn_id"]

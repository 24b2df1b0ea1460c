"""ListSessions through Envoy (`GET /api/v1/task-sessions`, ADR 0091): sessions in creation
order, paged like messages, each with its command and failure counts kept as it is written;
bad paging arguments name their field."""

from __future__ import annotations

from typing import Any

import pytest

from shellexec.demo.rest import RestError

from support.acp import codex_end, codex_start
from support.rest import unique
from support.stack import Stack

Json = dict[str, Any]


def sessions(stack: Stack, query: str) -> Json:
    page: Json = stack.api.call("GET", f"/api/v1/task-sessions{query}")
    return page


def test_counts_follow_each_command_and_its_result(stack: Stack) -> None:
    session = stack.api.new_session("codex")
    sid = session["id"]
    assert (session.get("command_count", 0), session.get("failure_count", 0)) == (0, 0)
    stack.api.start_turn(sid)
    stack.api.play(sid, [codex_start("ok", "make"), codex_end("ok", "built\n", 0)])
    stack.api.play(sid, [codex_start("bad", "make test"), codex_end("bad", "FAIL\n", 2)])
    stack.api.play(sid, [codex_start("slow", "make lint")])  # still running: not a failure
    stack.api.publish(sid, {"sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": "not a command"}})
    now = stack.api.session(sid)
    assert (now["command_count"], now["failure_count"]) == (3, 1)

    stack.api.publish(sid, codex_end("slow", "lint errors\n", 1))
    listed = sessions(stack, "?sort=desc&limit=1")["sessions"][0]
    assert listed["id"] == sid
    assert (listed["command_count"], listed["failure_count"]) == (3, 2)


def test_pages_run_newest_first_or_oldest_first_with_cursors(stack: Stack) -> None:
    task = unique("paged")
    created = [stack.api.create_session(task, "claude")["id"] for _ in range(5)]

    first = sessions(stack, "?sort=desc&limit=2")
    assert [s["id"] for s in first["sessions"]] == [created[4], created[3]]
    assert first["has_more"] is True
    assert first["cursor"] == created[3]
    assert first["total"] >= 5
    second = sessions(stack, f"?sort=desc&limit=2&before={first['cursor']}")
    assert [s["id"] for s in second["sessions"]] == [created[2], created[1]]
    forward = sessions(stack, f"?limit=3&after={created[1]}")
    assert [s["id"] for s in forward["sessions"]] == [created[2], created[3], created[4]]
    assert forward.get("has_more", False) is False
    listed = second["sessions"][0]
    assert (listed["task_id"], listed["agent"], listed["state"]) == (task, "claude", "idle")
    assert listed["created_at"]


@pytest.mark.parametrize(("query", "status", "field"), [
    ("?limit=-1", 400, "limit"),
    ("?sort=sideways", 400, "sort"),
    ("?before=ses_00000000000000000000000000000000&after=ses_00000000000000000000000000000001",
     400, "before"),
    ("?before=ses_00000000000000000000000000000000", 404, "session (before)"),
    ("?after=not-a-session", 404, "session (after)"),
])
def test_bad_paging_is_refused_naming_the_field(stack: Stack, query: str, status: int,
                                                field: str) -> None:
    with pytest.raises(RestError) as raised:
        sessions(stack, query)
    answer = raised.value.response
    assert answer is not None
    assert answer.status == status
    assert field in answer.json()["message"]

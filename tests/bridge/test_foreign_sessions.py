"""Updates and requests an agent sends for another session than the one the bridge opened
(`session/new`'s answer): ACP clients keep sessions apart by id. They were recorded into the
run's session (a chat chunk, and a completed `rm -rf build`), and the requests served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bridge.hostile import (
    INVALID_PARAMS,
    Step,
    agent_text,
    error_of,
    raw,
    request,
    run_raw,
    update,
)
from bridge.provider_scripts import say

from support.stack import Stack

pytestmark = pytest.mark.slow

OTHER = "some-other-session"


def _for(session_id: str, body: dict[str, Any]) -> Step:
    return raw({"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": session_id, "update": body}})


def test_another_session_s_updates_are_not_recorded_and_its_requests_are_refused(
        stack: Stack, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    removal = {"sessionUpdate": "tool_call", "toolCallId": "rm", "kind": "execute",
               "status": "completed", "rawInput": {"command": "rm -rf build"}}
    script: list[Step] = [
        update(say("before ")),
        _for(OTHER, say("not ours ")), _for(OTHER, removal), _for("a third", say("nor this ")),
        {"request": {"method": "fs/read_text_file",
                     "params": {"sessionId": OTHER, "path": str(tmp_path / "notes.txt")}}},
        request("fs/read_text_file", path=str(tmp_path / "notes.txt")),
        update(say("after"))]
    finished, record = run_raw(stack, tmp_path, script, "--allow-fs-read")

    assert finished.code == 0, finished.stderr[-3000:]
    assert agent_text(stack, finished) == ["before after"]
    session_id = finished.result()["session_id"]
    assert [m["type"] for m in stack.api.messages(session_id)
            if m["author_type"] == "agent"] == ["message"]
    foreign, own = record["answers"]
    assert error_of(foreign) == (INVALID_PARAMS, {
        "sessionId": OTHER, "reason": "not the session this bridge opened"})
    assert own["result"] == {"content": "mine\n"}
    warnings = [line for line in finished.stderr.splitlines() if "not recorded" in line]
    assert len(warnings) == 2, warnings  # once per other session
    assert f"for session '{OTHER}', not the session this bridge opened" in warnings[0]
    assert "; 3 refused" in finished.stderr


def test_an_answer_naming_a_session_before_session_new_s_does_not_take_its_place(
        stack: Stack, tmp_path: Path) -> None:
    """The run's session is the one its `session/new` request was answered with: an
    agent's other answer naming a session (here an unsolicited one) made the bridge drop its
    own session's updates as another's."""
    decoy = {"jsonrpc": "2.0", "id": 999, "result": {"sessionId": "decoy"}}
    script: list[Step] = [{"before_session_new": json.dumps(decoy) + "\n"},
                          update(say("still recorded"))]
    finished, _ = run_raw(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    assert agent_text(stack, finished) == ["still recorded"]
    assert "not recorded" not in finished.stderr


def test_an_update_naming_no_session_is_not_recorded(stack: Stack, tmp_path: Path) -> None:
    """ACP requires every update's `sessionId`: one without it (or null) is none of the run's
    session, and was recorded into it; a permission request without it announced its call."""
    def nameless(params: dict[str, Any]) -> Step:
        return raw({"jsonrpc": "2.0", "method": "session/update", "params": params})

    removal = {"sessionUpdate": "tool_call", "toolCallId": "rm", "kind": "execute",
               "status": "completed", "rawInput": {"command": "rm -rf build"}}
    asked = {"toolCall": {"toolCallId": "rm", "title": "rm -rf build", "kind": "execute"},
             "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}]}
    script: list[Step] = [update(say("before ")), nameless({"update": say("no id ")}),
                          nameless({"sessionId": None, "update": removal}),
                          {"request": {"method": "session/request_permission",
                                       "params": asked}},
                          update(say("after"))]
    finished, record = run_raw(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    assert agent_text(stack, finished) == ["before after"]  # no tool call came between
    assert error_of(record["answers"][0])[0] == INVALID_PARAMS  # the SDK's: no sessionId
    warnings = [line for line in finished.stderr.splitlines() if "not recorded" in line]
    assert len(warnings) == 1, warnings  # once for all the messages naming none
    assert "agent sent session/update naming no session, not the session this bridge " \
           "opened ('raw-session')" in warnings[0]
    assert "; 3 refused" in finished.stderr


def test_the_run_s_own_session_is_logged_by_its_start(stack: Stack, tmp_path: Path) -> None:
    """The run's session is the id the agent's `session/new` answer chose, up to a frame's
    16 MiB: each warning about another session's update repeated it whole."""
    own = "s" * 100_000
    finished, _ = run_raw(stack, tmp_path, [{"session_id": own}, update(say("elsewhere"))])

    assert finished.code == 0, finished.stderr[-3000:]
    warnings = [line for line in finished.stderr.splitlines() if "not recorded" in line]
    assert len(warnings) == 1, warnings
    assert f"opened ('{'s' * 200}'… (100000 characters))" in warnings[0]
    assert len(warnings[0]) < 1000

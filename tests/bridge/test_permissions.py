"""`session/request_permission` answered by `--permission`, asked by the fake agent."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Step, launch, run_bridge

from support.acp import FIXTURES, load_fixture
from support.stack import Stack

pytestmark = pytest.mark.slow

TOOL_CALL = {"toolCallId": "perm-1", "title": "rm -rf build", "kind": "execute",
             "status": "pending", "rawInput": {"command": "rm -rf build"}}


def _option(kind: str) -> dict[str, str]:
    return {"optionId": f"opt-{kind}", "name": kind.replace("_", " "), "kind": kind}


ALL_KINDS = ("allow_once", "allow_always", "reject_once", "reject_always")
# The option sets each script offers, in order: everything, Auggie's pair, only "always"
# kinds, only allows, nothing at all.
OFFERS: tuple[tuple[str, ...], ...] = (
    ALL_KINDS, ("allow_once", "reject_once"), ("allow_always", "reject_always"),
    ("allow_once", "allow_always"), ())


def _ask(kinds: tuple[str, ...]) -> dict[str, Any]:
    return {"permission": {"toolCall": TOOL_CALL, "options": [_option(k) for k in kinds]}}


def _selected(option: str | None) -> dict[str, Any]:
    if option is None:
        return {"outcome": {"outcome": "cancelled"}}
    return {"outcome": {"outcome": "selected", "optionId": f"opt-{option}"}}


EXPECTED: dict[str, list[str | None]] = {
    "allow_once": ["allow_once", "allow_once", "allow_always", "allow_once", None],
    "allow_always": ["allow_always", "allow_once", "allow_always", "allow_always", None],
    "reject_once": ["reject_once", "reject_once", "reject_always", None, None],
    "reject_always": ["reject_always", "reject_once", "reject_always", None, None],
    "cancel": [None, None, None, None, None],
}


@pytest.mark.parametrize("answer", list(EXPECTED))
def test_permission_answer_picks_the_configured_kind_or_its_sibling(
        stack: Stack, tmp_path: Path, answer: str) -> None:
    finished = run_bridge(stack, tmp_path, [_ask(kinds) for kinds in OFFERS],
                          "--permission", answer, "--prompt", "Clean up.")
    assert finished.code == 0, finished.stderr
    assert finished.record["permissions"] == [_selected(o) for o in EXPECTED[answer]]
    assert "permission asked for 'rm -rf build'" in finished.stderr


def test_default_answer_is_allow_once(stack: Stack, tmp_path: Path) -> None:
    finished = run_bridge(stack, tmp_path, [_ask(ALL_KINDS)], "--prompt", "Clean up.")
    assert finished.record["permissions"] == [_selected("allow_once")]


def test_permission_asked_after_cancel_is_answered_cancelled(stack: Stack,
                                                             tmp_path: Path) -> None:
    script: list[Step] = [{"mark": "asking"}, {"wait_for_cancel": 30}, _ask(ALL_KINDS)]
    bridge = launch(stack, tmp_path, script, "--prompt", "Clean up.")
    bridge.wait_for_mark("asking")
    bridge.process.send_signal(signal.SIGINT)
    finished = bridge.finish()
    assert finished.code == 130, finished.stderr
    assert finished.record["permissions"] == [_selected(None)]


def _tool_messages(stack: Stack, session_id: str) -> list[dict[str, Any]]:
    return [m for m in stack.api.messages(session_id) if m["type"].startswith("tool")]


def test_a_call_announced_only_by_its_permission_request_is_recorded_as_a_command(
        stack: Stack, tmp_path: Path) -> None:
    # Gemini CLI: no tool_call for a command that needs approval, only the request's toolCall.
    announced, final = load_fixture("gemini-approval-failure")
    tool_call = {key: value for key, value in announced.items()
                 if key not in ("sessionUpdate", "_meta")}
    script: list[Step] = [
        {"permission": {"toolCall": tool_call, "options": [_option("allow_once")]}},
        {"update": final}]
    finished = run_bridge(stack, tmp_path, script, "--agent", "gemini", "--prompt", "Clean.")
    assert finished.code == 0, finished.stderr
    session_id = finished.result()["session_id"]
    [message] = _tool_messages(stack, session_id)
    expected = json.loads((FIXTURES / "expected" / "gemini-approval-failure.json").read_text())
    assert message["type"] == "tool_execute"
    shell = message["metadata"]["normalized"]["shell_exec"]
    assert (shell["command"], shell["work_dir"]) == (expected["command"], expected["work_dir"])
    stored = stack.api.shell_output(session_id, message["id"])
    assert (stored["status"], stored["output"]) == (expected["status"], expected["output"])


def test_a_permission_request_for_a_reported_call_records_nothing_more(
        stack: Stack, tmp_path: Path) -> None:
    # Claude and Auggie ask after the tool_call: the request adds no update.
    start = {"sessionUpdate": "tool_call", "toolCallId": "perm-1", "title": "rm -rf build",
             "kind": "execute", "status": "pending", "rawInput": {"command": "rm -rf build"}}
    asked = {**TOOL_CALL, "title": "Remove the build tree",
             "content": [{"type": "content", "content": {"type": "text", "text": "why"}}]}
    script: list[Step] = [
        {"update": start}, {"permission": {"toolCall": asked, "options": [_option("allow_once")]}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "perm-1",
                    "status": "completed", "rawOutput": {"stdout": "", "exit_code": 0}}}]
    finished = run_bridge(stack, tmp_path, script, "--prompt", "Clean up.")
    assert finished.code == 0, finished.stderr
    session_id = finished.result()["session_id"]
    [message] = _tool_messages(stack, session_id)
    assert message["metadata"]["title"] == "rm -rf build"
    stored = stack.api.shell_output(session_id, message["id"])
    assert (stored["status"], stored["output"]) == (
        "complete", {"exit_code": 0, "stdout": "", "truncated": False})

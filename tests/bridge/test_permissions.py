"""`session/request_permission` answered by `--permission`, asked by the fake agent."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Step, launch, run_bridge

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

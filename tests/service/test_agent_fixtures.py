"""The other agents' recorded sequences through Envoy's front door: the Normalize route, and the
ingest routes (session, turn, updates, turn completion) with the stored record read back. A
`*-prompt-cancelled` fixture is a call the agent never finished: its turn ends `cancelled`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.acp import FIXTURES, fixture_names, load_fixture
from support.stack import Stack

NEW_AGENTS = ("gemini", "qwen", "goose", "kimi", "vibe", "cursor", "copilot", "grok")
NAMES = [name for name in fixture_names() if name.split("-")[0] in NEW_AGENTS]
NOT_SHELL = sorted(path.stem for path in (FIXTURES / "not-shell").glob("*.jsonl"))
PROMPT_CANCELLED = "-prompt-cancelled"
NORMALIZE = "/api/v1/shell-exec:normalize"


def _expected(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / "expected" / f"{name}.json").read_text())
    return loaded


def _agent(name: str) -> str:
    return name.split("-")[0]


def test_every_new_agent_has_fixtures_for_success_and_failure() -> None:
    for agent in NEW_AGENTS:
        cases = {name.removeprefix(f"{agent}-") for name in NAMES if _agent(name) == agent}
        assert any("success" in case or "streaming" in case for case in cases), agent
        if agent != "grok":  # grok's failure shape is not known, even second-hand
            assert any("failure" in case for case in cases), agent


@pytest.mark.parametrize("name", [n for n in NAMES if not n.endswith(PROMPT_CANCELLED)])
@pytest.mark.parametrize("hinted", [False, True], ids=["shape", "hint"])
def test_normalize_route_gives_the_expected_record(stack: Stack, name: str,
                                                   hinted: bool) -> None:
    body: dict[str, Any] = {"updates": load_fixture(name)}
    if hinted:
        body["agent"] = _agent(name)
    response = stack.api.request("POST", NORMALIZE, body)
    assert response.status == 200, response.body
    shown, expected = response.json(), _expected(name)
    assert (shown["status"], shown["result"]) == (expected["status"], expected["result"])
    assert shown["output"] == expected["output"]
    # The contract writes an unknown command or directory as "".
    assert (shown["shell_exec"].get("command") or None) == expected["command"]
    assert (shown["shell_exec"].get("work_dir") or None) == expected["work_dir"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("hinted", [False, True], ids=["shape", "hint"])
def test_ingest_routes_store_the_expected_record(stack: Stack, name: str, hinted: bool) -> None:
    session = stack.api.new_session(agent=_agent(name) if hinted else None)
    turn = stack.api.start_turn(session["id"])
    message_id = stack.api.play(session["id"], load_fixture(name))
    stop = "cancelled" if name.endswith(PROMPT_CANCELLED) else "end_turn"
    stack.api.complete_turn(session["id"], turn, stop)

    expected = _expected(name)
    stored = stack.api.shell_output(session["id"], message_id)
    assert stored["status"] == expected["status"]
    assert stored["output"] == expected["output"]
    [message] = [m for m in stack.api.messages(session["id"]) if m["id"] == message_id]
    assert message["type"] == "tool_execute"
    shell = message["metadata"]["normalized"]["shell_exec"]
    assert (shell.get("command") or None, shell.get("work_dir") or None, shell["result"]) == (
        expected["command"], expected["work_dir"], expected["result"])


@pytest.mark.parametrize("name", NOT_SHELL)
def test_reads_and_searches_are_stored_as_tool_calls_not_commands(stack: Stack,
                                                                   name: str) -> None:
    session = stack.api.new_session(agent=_agent(name))
    message_id = stack.api.play(session["id"], load_fixture(str(Path("not-shell") / name)))
    [message] = [m for m in stack.api.messages(session["id"]) if m["id"] == message_id]
    assert message["type"] == "tool_call"

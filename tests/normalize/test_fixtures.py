"""Every recorded provider sequence in tests/fixtures/acp folds to its expected record.

A fixture named `*-hosted-*` is a command the bridge ran in a terminal it hosts for the agent:
besides the agent's updates it holds the v2 terminal updates the bridge records.
A fixture named `*-prompt-cancelled` ends with its call unfinished, as the agent leaves it when
the prompt is cancelled (Kimi sends no final update): its expected record is the one after the
prompt ended (`cancel`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shellexec.normalize import (
    MAX_FIELD_BYTES,
    ShellRecord,
    ShellState,
    cancel,
    fold_all,
    shell_record,
)
from shellexec.vocabulary import ACP_TERMINAL_UPDATES, META_TERMINAL_TOOL_CALL

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "acp"
NAMES = sorted(path.stem for path in FIXTURES.glob("*.jsonl"))
V1_STATUSES = {None, "pending", "in_progress", "completed", "failed"}
PROMPT_CANCELLED = "-prompt-cancelled"


def _updates(name: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _expected(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / "expected" / f"{name}.json").read_text())
    return loaded


def _record(shown: ShellRecord) -> dict[str, Any]:
    """A record in the fixtures' expected format: absent output fields are left out."""
    output: dict[str, Any] = {"truncated": shown.output.truncated}
    for key in ("exit_code", "stdout", "stderr"):
        value = getattr(shown.output, key)
        if value is not None:
            output[key] = value
    return {
        "command": shown.command,
        "work_dir": shown.work_dir,
        "status": shown.status,
        "result": shown.result,
        "output": output,
    }


def test_every_fixture_has_an_expected_view_and_every_view_a_fixture() -> None:
    expected = sorted(path.stem for path in (FIXTURES / "expected").glob("*.json"))
    assert expected == NAMES
    assert len(NAMES) >= 21


def _folded(name: str, agent: str | None = None) -> ShellState:
    state = fold_all(_updates(name), agent=agent)
    return cancel(state) if name.endswith(PROMPT_CANCELLED) else state


@pytest.mark.parametrize("name", NAMES)
def test_fixture_folds_to_its_expected_view(name: str) -> None:
    assert _record(shell_record(_folded(name))) == _expected(name)


@pytest.mark.parametrize("name", NAMES)
def test_fixture_is_a_shell_command(name: str) -> None:
    assert shell_record(fold_all(_updates(name))).is_shell


def _tool_updates(name: str) -> list[dict[str, Any]]:
    return [u for u in _updates(name) if u["sessionUpdate"] not in ACP_TERMINAL_UPDATES]


@pytest.mark.parametrize("name", NAMES)
def test_fixture_lines_are_updates_of_one_call(name: str) -> None:
    # A `*-hosted-*` fixture holds the v2 terminal updates the bridge records for a terminal
    # it hosts, each naming the call in `_meta.shellexec_tool_call_id` (docs/bridge.md).
    updates = _updates(name)
    assert updates[0]["sessionUpdate"] == "tool_call"
    tool_updates = _tool_updates(name)
    assert {update["sessionUpdate"] for update in tool_updates[1:]} <= {"tool_call_update"}
    [call_id] = {update["toolCallId"] for update in tool_updates}
    hosted = [update for update in updates if update["sessionUpdate"] in ACP_TERMINAL_UPDATES]
    assert all(update["_meta"][META_TERMINAL_TOOL_CALL] == call_id for update in hosted)
    assert bool(hosted) == ("-hosted-" in name)


def _uses_only_v1_statuses(name: str) -> bool:
    # The SDK's models are ACP v1; a fixture with a v2 status (`cancelled`) cannot validate.
    return all(update.get("status") in V1_STATUSES for update in _updates(name))


@pytest.mark.parametrize("name", [name for name in NAMES if _uses_only_v1_statuses(name)])
def test_fixture_with_v1_statuses_validates_against_the_acp_sdk(name: str) -> None:
    # The v2 terminal updates are not in the SDK's (v1) models: only the agent's are checked.
    from acp import schema

    for update in _tool_updates(name):
        schema.SessionNotification.model_validate({"sessionId": "sess_1", "update": update})


def test_large_output_fixture_exceeds_300_kib_and_cuts_inside_a_character() -> None:
    chunks = [update["_meta"]["terminal_output_delta"]["data"]
              for update in _updates("codex-ts-terminal-large-output")[1:-1]]
    data = "".join(chunks).encode()
    assert len(data) > 300 * 1024
    assert 0x80 <= data[len(data) - MAX_FIELD_BYTES] < 0xC0

"""A call that is not a shell command has no command and no directory in its record, whatever
its arguments name (docs/api.md: for another tool `shell_exec.command` is empty); the state keeps
them, so a later update that makes the call a shell command shows them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shellexec.normalize import dump_state, fold, fold_all, load_state, shell_record

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "acp" / "not-shell"
NOT_SHELL = sorted(path.stem for path in FIXTURES.glob("*.jsonl"))
Update = dict[str, Any]


def _load(name: str) -> list[Update]:
    lines = (FIXTURES / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("name", NOT_SHELL)
@pytest.mark.parametrize("hinted", [False, True])
def test_a_recorded_tool_call_has_no_command_and_no_directory(name: str, hinted: bool) -> None:
    record = shell_record(fold_all(_load(name), agent=name.split("-")[0] if hinted else None))
    assert (record.is_shell, record.command, record.work_dir) == (False, None, None)
    assert record.title


@pytest.mark.parametrize("call", [
    # Codex reports `rg` as kind `search`; without its argv or `parsed_cmd` no shell signal.
    {"kind": "search", "title": "Search TODO", "rawInput": {"command": "rg TODO",
                                                            "workdir": "/repo"}},
    {"kind": "read", "title": "Read notes", "rawInput": {"command": "cat notes",
                                                         "cwd": "/repo"}},
    {"kind": "other", "title": "mcp__tmux__send", "rawInput": {"command": "make test"},
     "_meta": {"claudeCode": {"toolName": "mcp__tmux__send"}}},
])
def test_arguments_that_name_a_command_make_no_command_of_another_tool(call: Update) -> None:
    state = fold_all([{"sessionUpdate": "tool_call", "toolCallId": "t", **call}])
    record = shell_record(state)
    assert (record.is_shell, record.command, record.work_dir) == (False, None, None)
    assert record.title == call["title"]
    assert state.command is not None  # the fold still knows it


def test_a_terminal_that_makes_a_read_a_shell_command_shows_the_command_it_named() -> None:
    read = {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "read", "title": "cat a",
            "status": "in_progress", "rawInput": {"command": "cat a", "cwd": "/repo"},
            "content": [{"type": "terminal", "terminalId": "term-1"}]}
    before = fold_all([read])
    assert (shell_record(before).command, shell_record(before).work_dir) == (None, None)
    # After a restart too: the record keeps what the record of the row did not show.
    restored = load_state(json.loads(json.dumps(dump_state(before))), None, None)
    chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": "term-1", "data": "YQo="}
    for state in (before, restored):
        after = shell_record(fold(state, chunk))
        assert (after.is_shell, after.command, after.work_dir) == (True, "cat a", "/repo")

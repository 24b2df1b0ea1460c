"""A tool call that is not a shell command stores no command and no directory in its row, and
its content is its title (docs/api.md: a tool call's content is "its command (shell) or
title"); its fold-state record keeps what the state knows of them, so the state loads as it
was folded and a later update that makes it a shell command shows the command (ADR 0113)."""

from __future__ import annotations

import json
from typing import Any

from shellexec.normalize import fold, fold_all, load_state
from shellexec.projection import NO_MASKING, project_message, state_columns, state_record
from shellexec.store.models import Message

MCP = {"sessionUpdate": "tool_call", "toolCallId": "toolu_m", "title": "mcp__tmux__send",
       "kind": "other", "rawInput": {"command": "make test", "cwd": "/repo"},
       "_meta": {"claudeCode": {"toolName": "mcp__tmux__send"}}}


def _row(columns: dict[str, object], **more: Any) -> Message:
    return Message(id="m", session_id=1, task_id="t", turn_id="", author_type="agent",
                   created_at=0, updated_at=0, **{**columns, **more})


def test_another_tool_s_row_shows_its_title_and_no_command() -> None:
    state = fold_all([MCP])
    assert (state.is_shell, state.command) == (False, "make test")
    columns = state_columns(state)
    assert (columns["type"], columns["content"], columns["command"], columns["work_dir"]) == (
        "tool_call", "mcp__tmux__send", "", "")
    view = project_message(_row(columns), NO_MASKING)
    assert (view.content, view.title, view.shell_exec) == ("mcp__tmux__send",
                                                          "mcp__tmux__send", None)


def test_another_tool_s_row_loads_the_state_it_was_folded_to() -> None:
    state = fold_all([MCP])
    columns = state_columns(state)
    record = json.loads(str(columns["fold_state"]))
    assert (record["command"], record["work_dir"]) == ("make test", "/repo")
    assert load_state(state_record(_row(columns)), None, None) == state


def test_another_tool_without_arguments_loads_with_no_command() -> None:
    state = fold_all([{**MCP, "rawInput": {}}])
    columns = state_columns(state)
    assert load_state(state_record(_row(columns)), None, None) == state


def test_a_row_written_before_keeps_its_command_when_it_loads() -> None:
    # Before, the row's command column held the argument and the record left it out.
    state = fold_all([MCP])
    record = json.loads(str(state_columns(state)["fold_state"]))
    del record["command"], record["work_dir"]
    row = _row({**state_columns(state), "fold_state": json.dumps(record),
                "command": "make test", "work_dir": "/repo", "content": "make test"})
    assert load_state(state_record(row), None, None) == state


def test_a_reloaded_read_that_a_terminal_makes_a_shell_command_shows_the_command() -> None:
    read = {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "read", "title": "Read a",
            "status": "in_progress", "rawInput": {"command": "cat a", "cwd": "/repo"},
            "content": [{"type": "terminal", "terminalId": "term-1"}]}
    columns = state_columns(fold_all([read]))
    assert (columns["command"], columns["content"]) == ("", "Read a")
    restored = load_state(state_record(_row(columns)), None, None)
    chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": "term-1", "data": "YQo="}
    after = state_columns(fold(restored, chunk))
    assert (after["type"], after["command"], after["work_dir"], after["content"]) == (
        "tool_execute", "cat a", "/repo", "cat a")

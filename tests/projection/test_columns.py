"""A tool call's row: the fold-state record leaves out what the row's own columns hold, and
`state_record` puts it back, so the state loads exactly as it was folded (ADR 0113)."""

from __future__ import annotations

import json
from typing import Any

from shellexec.normalize import MAX_FIELD_BYTES, fold_all, load_state
from shellexec.projection import state_columns, state_record
from shellexec.store.models import Message


def _start(command: str) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
            "title": command, "status": "in_progress",
            "rawInput": {"command": command, "cwd": "/repo"}}


def _row(columns: dict[str, object]) -> Message:
    return Message(**columns)


def test_what_the_columns_hold_is_not_stored_again_in_the_record() -> None:
    state = fold_all([_start("make test")])
    columns = state_columns(state)
    record = json.loads(str(columns["fold_state"]))
    assert not {"command", "title", "work_dir", "is_shell"} & set(record)
    assert (columns["command"], columns["title"], columns["work_dir"]) == (
        "make test", "make test", "/repo")
    restored = load_state(state_record(_row(columns)), None, None)
    assert restored == state


def test_a_command_longer_than_its_column_stays_in_the_record() -> None:
    command = "echo " + "x" * (MAX_FIELD_BYTES + 10)
    state = fold_all([_start(command)])
    columns = state_columns(state)
    assert columns["command"] != state.command  # the column keeps only its head
    record = json.loads(str(columns["fold_state"]))
    assert record["command"] == state.command
    assert load_state(state_record(_row(columns)), None, None).command == state.command


def test_a_record_written_with_every_key_keeps_its_own_values() -> None:
    state = fold_all([_start("make")])
    full = {"version": 1, "command": "make", "title": "make", "work_dir": "/repo",
            "is_shell": True, "tool_call_id": "c", "kind": "execute",
            "reported_status": "running"}
    row = _row({**state_columns(state), "fold_state": json.dumps(full), "command": "other"})
    assert state_record(row)["command"] == "make"

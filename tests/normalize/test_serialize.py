"""dump_state / load_state: a stored state resumes the fold exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shellexec.normalize import (
    MAX_FIELD_BYTES,
    ShellState,
    dump_state,
    fold_all,
    load_state,
    new_state,
    shell_record,
)
from shellexec.normalize.exit_codes import ExitRank


def _restored(state: ShellState) -> ShellState:
    record = json.loads(json.dumps(dump_state(state)))
    stdout = None if state.stdout is None else state.stdout.text
    stderr = None if state.stderr is None else state.stderr.text
    return load_state(record, stdout, stderr)


def _update(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "c", **fields}


SEQUENCE: list[dict[str, Any]] = [
    {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute", "title": "$ make",
     "status": "pending", "rawInput": {"command": "make", "cwd": "/r", "description": "Build"}},
    _update(_meta={"terminal_output_delta": {"data": "$ make"}}),
    _update(_meta={"terminal_output_delta": {"data": "\nbuilding\n"}}),
    _update(rawOutput={"stderr": "warning\n", "exit_code": 2}),
    _update(_meta={"terminal_output_delta": {"data": "x" * MAX_FIELD_BYTES}}),
    _update(_meta={"terminal_output": {"data": "tail\n"}}),
    _update(status="completed", _meta={"terminal_exit": {"exit_code": 2}}),
    _update(_meta={"terminal_output_delta": {"data": "late\n"}}),
]


@pytest.mark.parametrize("split", range(len(SEQUENCE) + 1))
def test_restored_state_resumes_the_fold_exactly(split: int) -> None:
    whole = fold_all(SEQUENCE)
    resumed = fold_all(SEQUENCE[split:], state=_restored(fold_all(SEQUENCE[:split])))
    assert shell_record(resumed) == shell_record(whole)
    assert resumed == whole


def test_record_is_json_and_has_a_version_but_no_bodies() -> None:
    record = dump_state(fold_all(SEQUENCE))
    assert record["version"] == 1
    text = json.dumps(record)
    assert "building" not in text
    assert "warning" not in text


def test_loading_garbage_gives_defaults() -> None:
    record: dict[str, object] = {
        "version": "x", "command": 5, "reported_status": "exploded", "exit_code": "2",
        "exit_rank": 99, "is_shell": "yes", "live_source": None, "echo": [],
        "stdout": "not an object", "stderr": {"total_bytes": True, "truncated": 1},
    }
    state = load_state(record, "out", "")
    assert state == ShellState(stdout=state.stdout, stderr=state.stderr)
    assert (shell_record(state).output.stdout, shell_record(state).output.stderr) == ("out", "")
    assert load_state({}, None, None) == new_state()


def test_exit_code_with_a_garbage_rank_keeps_the_highest_rank() -> None:
    state = load_state({"exit_code": 3, "exit_rank": "high"}, None, None)
    assert (state.exit_code, state.exit_rank) == (3, ExitRank.TERMINAL)


def test_oversized_stored_body_is_bounded_again() -> None:
    state = load_state({}, "y" * (MAX_FIELD_BYTES + 10), None)
    assert state.stdout is not None
    assert state.stdout.byte_count == MAX_FIELD_BYTES
    assert state.stdout.truncated


def test_stream_exists_exactly_when_its_body_is_given() -> None:
    record = dump_state(fold_all(SEQUENCE))
    assert load_state(record, None, None).stdout is None
    assert load_state(record, "", None).stdout is not None


# Claude's plain result arriving before the terminal output it stands in for (ADR 0011).
FALLBACK_SEQUENCE: list[dict[str, Any]] = [
    {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute", "title": "ls",
     "status": "pending", "rawInput": {"command": "ls"}},
    _update(status="completed", rawOutput="raw text\n"),
    _update(_meta={"terminal_output": {"data": "terminal text\n"}}),
    _update(status="completed", rawOutput=[{"type": "text", "text": "raw again\n"}]),
]


@pytest.mark.parametrize("split", range(len(FALLBACK_SEQUENCE) + 1))
def test_restored_plain_fallback_resumes_the_fold_exactly(split: int) -> None:
    whole = fold_all(FALLBACK_SEQUENCE)
    resumed = fold_all(FALLBACK_SEQUENCE[split:],
                       state=_restored(fold_all(FALLBACK_SEQUENCE[:split])))
    expected = "terminal text\n"
    assert shell_record(resumed).output.stdout == shell_record(whole).output.stdout == expected
    assert resumed == whole


def test_record_from_before_the_fallback_key_loads_as_a_final_text() -> None:
    # Records written before `stdout.fallback` existed have only `final`: the text stays final.
    record = {"command": "ls", "live_source": "none", "echo": "done",
              "stdout": {"truncated": False, "total_bytes": 9, "final": True}}
    state = load_state(record, "raw text\n", None)
    assert (state.stdout_final, state.stdout_fallback) == (True, False)
    later = fold_all([_update(_meta={"terminal_output": {"data": "terminal text\n"}})], state)
    assert shell_record(later).output.stdout == "raw text\n"


# A record exactly as the release before `work_dir` wrote it: the directory under `cwd`.
RECORD_WITH_THE_OLD_CWD_KEY = (
    '{"version": 1, "agent": null, "tool_call_id": "c", "kind": "execute", "is_shell": true,'
    ' "command": "make", "cwd": "/r", "title": "$ make", "description": "Build",'
    ' "reported_status": "pending", "cancelled_by_prompt": false, "exit_code": null,'
    ' "exit_rank": 0, "stdout": null, "stderr": null, "live_source": "none",'
    ' "echo": "pending", "terminal_chunks": false}'
)


def test_record_with_the_old_cwd_key_loads_its_work_dir() -> None:
    state = load_state(json.loads(RECORD_WITH_THE_OLD_CWD_KEY), None, None)
    assert state == fold_all(SEQUENCE[:1])
    assert shell_record(state).work_dir == "/r"


def test_record_is_written_with_the_work_dir_key() -> None:
    record = dump_state(fold_all(SEQUENCE[:1]))
    assert record["work_dir"] == "/r"
    assert "cwd" not in record


def test_record_leaves_out_what_a_missing_key_loads_as() -> None:
    # The record is stored in every tool call's row; defaults would more than double it.
    assert dump_state(new_state()) == {"version": 1}
    started = dump_state(fold_all(SEQUENCE[:1]))
    assert started == {"version": 1, "tool_call_id": "c", "kind": "execute", "is_shell": True,
                       "command": "make", "work_dir": "/r", "title": "$ make",
                       "description": "Build"}
    assert load_state(started, None, None) == fold_all(SEQUENCE[:1])


def test_exit_rank_is_kept_only_with_an_exit() -> None:
    running = dump_state(fold_all(SEQUENCE[:3]))
    assert "exit_rank" not in running
    finished = dump_state(fold_all(SEQUENCE))
    assert finished["exit_code"] == 2
    assert finished["exit_rank"] == int(fold_all(SEQUENCE).exit_rank) > int(ExitRank.NONE)

"""A fold-state record written before the directory's key was renamed holds it as `cwd`, in
full. Completing such a record from the row's `work_dir` column, which keeps only the head of a
long directory, must not replace it: the record loads with its whole directory."""

from __future__ import annotations

import json
from typing import Any

from shellexec.normalize import MAX_FIELD_BYTES, bounded_head, dump_state, fold_all, load_state
from shellexec.projection import state_columns, state_record
from shellexec.store.models import Message


def _start(work_dir: str) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
            "title": "make", "status": "in_progress",
            "rawInput": {"command": "make", "cwd": work_dir}}


def test_an_old_record_s_long_cwd_loads_whole() -> None:
    work_dir = "/" + "d" * (MAX_FIELD_BYTES + 10)
    state = fold_all([_start(work_dir)])
    assert state.work_dir == work_dir
    # The row as a version before 0b07a34 wrote it: the full record, the directory as `cwd`.
    old_record: dict[str, object] = {**dump_state(state), "cwd": work_dir}
    old_record.pop("work_dir")
    columns = {**state_columns(state), "fold_state": json.dumps(old_record)}
    assert columns["work_dir"] == bounded_head(work_dir) != work_dir
    restored = load_state(state_record(Message(**columns)), None, None)
    assert restored.work_dir == work_dir

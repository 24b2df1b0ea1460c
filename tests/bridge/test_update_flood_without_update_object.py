"""`session/update` frames of the bridge's session whose `update` is null, missing or no JSON
object, from a hostile agent: each of the first ten costs one warning, a flood only a tally
at each power of ten (as dropped frames and unserved notifications do), and every one is
counted as `refused` in the closing line. 50,000 of them wrote 50,000 identical lines and
were counted nowhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bridge.hostile import agent_text, raw, run_raw, update
from bridge.provider_scripts import say

from support.stack import Stack

pytestmark = pytest.mark.slow

FLOOD = 200
WARNING = "agent sent a session/update without an update object"


def _frame(params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}) + "\n"


def test_updates_without_an_update_object_are_warned_of_ten_times_then_tallied_and_counted(
        stack: Stack, tmp_path: Path) -> None:
    odd: list[dict[str, Any]] = [
        {"sessionId": "raw-session"},  # no `update` at all
        {"sessionId": "raw-session", "update": 7},
        {"sessionId": "raw-session", "update": "x\nshellexec bridge: published 99 update(s)"},
        {"sessionId": "raw-session", "update": []}]
    frames = odd + [{"sessionId": "raw-session", "update": None}] * (FLOOD - len(odd))
    finished, _ = run_raw(stack, tmp_path, [
        update(say("before ")), {"raw": "".join(_frame(params) for params in frames)},
        raw({"jsonrpc": "2.0", "method": "session/update",
             "params": {"sessionId": "raw-session", "update": None}}),
        update(say("after"))])

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    lines = [line for line in finished.stderr.splitlines() if "without an update object" in line]
    assert len(lines) == 11, "\n".join(lines)
    assert lines[0] == f"shellexec bridge: {WARNING} (null or missing); skipped"
    assert lines[1] == f"shellexec bridge: {WARNING} (a number); skipped"
    assert lines[2] == f"shellexec bridge: {WARNING} (a string); skipped"  # not its text
    assert lines[3] == f"shellexec bridge: {WARNING} (an array); skipped"
    assert lines[9] == (f"shellexec bridge: {WARNING} (null or missing); skipped; more are "
                        "only counted")
    assert lines[10] == ("shellexec bridge: agent sent 100 session/updates without an update "
                         "object so far (the latest: null or missing): skipped")
    assert "published 99" not in finished.stderr
    # The user's prompt and the agent's two messages; every update-less one counted refused.
    assert (f"published 3 update(s); 0 already stored; {FLOOD + 1} refused"
            in finished.stderr.splitlines()[-1])
    assert agent_text(stack, finished) == ["before after"]

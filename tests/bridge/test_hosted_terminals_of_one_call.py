"""Two hosted commands of one tool call (`--host-terminals`) printing faster than the
service stores: their chunks write one output, in arrival order, so neither may pass the
other; the bridge keeps their waiting output bounded all the same (ADR 0123, since
2026-12-06), and the service stores the newest output of both, marked cut."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Step, launch
from bridge.provider_scripts import say

from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES

from support.stack import Stack

pytestmark = pytest.mark.slow

HANG_SECONDS = 60.0


def test_two_commands_of_one_call_printing_fast_cannot_fill_the_buffer(
        stack: Stack, tmp_path: Path) -> None:
    # About 7 MB each at pipe speed, read 64 KiB at a time, in turn: before, none of these
    # chunks merged, and the buffer filled after a score of them. Now what waits is at most
    # each terminal's newest output (about 350 KB as JSON) and the chunk being published.
    size = 7_000_000
    script: list[Step] = [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "make",
                    "kind": "execute", "status": "in_progress",
                    "rawInput": {"command": "make -j2"}}},
        {"terminal": {"command": f"head -c {size} /dev/zero | tr '\\0' b; echo END0"},
         "as": "t0"},
        {"terminal": {"command": f"head -c {size} /dev/zero | tr '\\0' c; echo END1"},
         "as": "t1"},
        {"terminal_wait": "t0"}, {"terminal_wait": "t1"},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
                    "status": "completed"}},
        {"update": say("done")}]
    finished = launch(stack, tmp_path, script, "--host-terminals", "--agent", "goose",
                      "--prompt", "Build both.", "--max-buffered-bytes",
                      "1500000").finish_unhung(HANG_SECONDS)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "; 0 refused" in finished.stderr
    session_id = finished.result()["session_id"]
    [tool] = [m for m in stack.api.messages(session_id) if m["type"].startswith("tool")]
    output: dict[str, Any] = stack.api.shell_output(session_id, tool["id"])["output"]
    assert output["exit_code"] == 0
    assert output["truncated"] is True
    stdout = output["stdout"]
    assert len(stdout.encode()) <= MAX_OUTPUT_STREAM_BYTES
    assert stdout.endswith(("END0\n", "END1\n"))
    # Whatever interleaving the two pipes made, the newest output holds only what they
    # printed; its first word is masked (it may be the end of a cut credential).
    shown = stdout.lstrip("*")
    assert len(shown) > MAX_OUTPUT_STREAM_BYTES // 2
    assert set(shown) <= set("bcEND01\n")

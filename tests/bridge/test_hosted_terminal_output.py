"""What a hosted command prints (`--host-terminals`) never fails the recording, and the
service stores what it would have stored from every byte: its newest output, marked cut. A
terminal no tool call names is recorded once, as a snapshot; the output chunks of one that
prints faster than the service stores are merged while they wait, so they cannot fill the
update buffer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Finished, Step, launch
from bridge.provider_scripts import say

from shellexec.projection.secrets import mask_secrets
from shellexec.rules.limits import MAX_HELD_TERMINAL_BYTES, MAX_OUTPUT_STREAM_BYTES

from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Run it."
HANG_SECONDS = 60.0



def _tool_call(call_id: str, **fields: Any) -> Step:
    return {"update": {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "make",
                       "kind": "execute", "status": "in_progress", **fields}}


def _run_terminal(command: str) -> list[Step]:
    return [{"terminal": {"command": command}, "as": "t1"}, {"terminal_wait": "t1"},
            {"terminal_release": "t1"}]


def _run(stack: Stack, workdir: Path, script: list[Step], *options: str) -> Finished:
    launched = launch(stack, workdir, script, "--host-terminals", "--agent", "goose",
                      "--prompt", PROMPT, *options)
    finished = launched.finish_unhung(HANG_SECONDS)
    assert finished.code == 0, finished.stderr[-3000:]
    assert "; 0 refused" in finished.stderr
    return finished


def _recorded(stack: Stack, finished: Finished) -> tuple[list[str], dict[str, Any]]:
    """The agent's text and the shell output of the session's one tool message."""
    session_id = finished.result()["session_id"]
    messages = stack.api.messages(session_id)
    [tool] = [m for m in messages if m["type"].startswith("tool")]
    text = [m["content"] for m in messages
            if m["author_type"] == "agent" and not m["type"].startswith("tool")]
    return text, stack.api.shell_output(session_id, tool["id"])["output"]


def _newest(printed: str) -> str:
    """What the service shows of `printed` (ASCII): its newest bytes, the first word masked
    since it may be the rest of a credential whose beginning was cut off."""
    return mask_secrets(printed[-MAX_OUTPUT_STREAM_BYTES:], head_cut=True)


def test_a_command_no_tool_call_names_may_print_past_the_held_bound(
        stack: Stack, tmp_path: Path) -> None:
    # No tool call is open, so the bridge names none; the service would hold such terminal
    # updates only up to 4 MiB of data and then refuse them.
    size = MAX_HELD_TERMINAL_BYTES + 1_000_000
    script: list[Step] = [*_run_terminal(f"head -c {size} /dev/zero | tr '\\0' x"),
                          _tool_call("call-1", content=[{"type": "terminal",
                                                         "terminalId": "@t1"}]),
                          {"update": say("done")}]
    finished = _run(stack, tmp_path, script)

    text, output = _recorded(stack, finished)
    assert text == ["done"]
    assert output == {"exit_code": 0, "stdout": _newest("x" * size), "truncated": True}


def test_a_command_printing_faster_than_the_service_stores_cannot_fill_the_buffer(
        stack: Stack, tmp_path: Path) -> None:
    # About 7 MB at pipe speed, read 64 KiB at a time: without merging, ~100 updates of
    # ~87 KB, far more than the 1 MB buffer holds while the service stores a few of them.
    lines = 1_000_000
    script: list[Step] = [_tool_call("call-1"), *_run_terminal(f"seq 1 {lines}"),
                          {"update": say("done")}]
    finished = _run(stack, tmp_path, script, "--max-buffered-bytes", "1000000")

    text, output = _recorded(stack, finished)
    assert text == ["done"]
    printed = "".join(f"{n}\n" for n in range(1, lines + 1))
    assert output == {"exit_code": 0, "stdout": _newest(printed), "truncated": True}
    assert finished.record["terminals"][1]["exitCode"] == 0

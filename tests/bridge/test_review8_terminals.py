"""Review 8 (hostile or merely chatty agent, `--host-terminals`): what a hosted command prints
must never fail the whole recording; the service keeps only the newest output anyway. These
reproduce what the review found; they fail until it is fixed."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Finished, Launched, Step, launch
from bridge.provider_scripts import say

from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Run it."
HANG_SECONDS = 120.0


def _finish(launched: Launched) -> Finished:
    try:
        return launched.finish(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        launched.process.kill()
        launched.process.wait()
        raise AssertionError("the bridge hung; stderr: "
                             + launched.stderr_path.read_text()[-3000:]) from None


def _tool_call(call_id: str) -> Step:
    return {"update": {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "make",
                       "kind": "execute", "status": "in_progress"}}


def _run_terminal(command: str) -> list[Step]:
    return [{"terminal": {"command": command}, "as": "t1"}, {"terminal_wait": "t1"},
            {"terminal_output": "t1"}, {"terminal_release": "t1"}]


def _agent_text(stack: Stack, finished: Finished) -> list[str]:
    session_id = finished.result()["session_id"]
    return [m["content"] for m in stack.api.messages(session_id) if m["authorType"] == "agent"]


def _run(stack: Stack, workdir: Path, script: list[Step]) -> Finished:
    return _finish(launch(stack, workdir, script, "--host-terminals", "--agent", "goose",
                          "--prompt", PROMPT))


def test_a_hosted_command_before_any_tool_call_may_print_more_than_4_mib(
        stack: Stack, tmp_path: Path) -> None:
    # No tool call is open, so the bridge names none; the service holds such terminal updates
    # only up to 4 MiB and then refuses them with FAILED_PRECONDITION.
    script: list[Step] = [*_run_terminal("head -c 6000000 /dev/zero | tr '\\0' x"),
                          {"update": say("done")}]
    finished = _run(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    assert _agent_text(stack, finished) == ["done"]


def test_a_hosted_command_printing_fast_does_not_fill_the_update_buffer(
        stack: Stack, tmp_path: Path) -> None:
    # 400 MB at pipe speed, read in 64 KiB chunks, each one update: far faster than the
    # service stores updates, so the 64 MiB buffer fills although the service is up.
    script: list[Step] = [_tool_call("call-1"), *_run_terminal("head -c 400000000 /dev/zero"),
                          {"update": say("done")}]
    finished = _run(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    assert _agent_text(stack, finished) == ["done"]
    terminal: dict[str, Any] = finished.record["terminals"][1]
    assert terminal["exitCode"] == 0

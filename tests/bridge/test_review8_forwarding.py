"""Review 8 (hostile agent): updates the agent sends that the bridge cannot forward must be
skipped with a warning, as docs/bridge.md promises for refused updates, not hang the bridge or
fail the whole run. These reproduce what the review found; they fail until it is fixed."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Finished, Launched, Step, launch
from bridge.provider_scripts import say

from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Do it."
# Far longer than a healthy run of a few updates takes; reaching it means the bridge hung.
HANG_SECONDS = 45.0


def _finish(launched: Launched) -> Finished:
    try:
        return launched.finish(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        launched.process.kill()
        launched.process.wait()
        raise AssertionError("the bridge hung; stderr: "
                             + launched.stderr_path.read_text()[-3000:]) from None


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"deeper": value}
    return value


def _agent_text(stack: Stack, finished: Finished) -> list[str]:
    session_id = finished.result()["session_id"]
    return [m["content"] for m in stack.api.messages(session_id) if m["authorType"] == "agent"]


@pytest.mark.parametrize("meta", [
    pytest.param(_nested(60), id="nested-60-deep"),
    pytest.param(10 ** 400, id="integer-beyond-float"),
])
def test_an_update_the_client_cannot_encode_is_skipped_not_a_hang(
        stack: Stack, tmp_path: Path, meta: Any) -> None:
    bad = {"sessionUpdate": "agent_message_chunk",
           "content": {"type": "text", "text": "never stored "}, "_meta": {"x": meta}}
    script: list[Step] = [{"update": say("before ")}, {"update": bad}, {"update": say("after")}]
    finished = _finish(launch(stack, tmp_path, script, "--prompt", PROMPT))

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    assert _agent_text(stack, finished) == ["before after"]


def test_terminal_chunks_no_tool_call_names_do_not_fail_the_run(stack: Stack,
                                                                tmp_path: Path) -> None:
    # ACP v2 terminal updates for a terminal no tool call names yet: the service holds at most
    # 256 of them per session and then refuses the publish with FAILED_PRECONDITION.
    chunks: list[Step] = [
        {"update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "orphan",
                    "data": "eA=="}} for _ in range(300)]
    script: list[Step] = [{"update": say("before ")}, *chunks, {"update": say("after")}]
    finished = _finish(launch(stack, tmp_path, script, "--prompt", PROMPT))

    assert finished.code == 0, finished.stderr[-3000:]
    assert _agent_text(stack, finished) == ["before after"]

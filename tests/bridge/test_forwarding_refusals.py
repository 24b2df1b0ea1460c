"""Updates the bridge cannot forward are skipped with a warning naming them, as docs/bridge.md
promises: one the client cannot encode and one the service refuses for itself alone neither
hang the bridge nor fail the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Finished, Step, launch
from bridge.provider_scripts import say

from shellexec.projection import NO_MASKING, Masking
from shellexec.rules.limits import MAX_HELD_TERMINAL_UPDATES
from shellexec.service.stateless import normalize_updates

from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Do it."
# Far longer than a healthy run of a few hundred updates takes; reaching it means a hang.
HANG_SECONDS = 45.0



def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"deeper": value}
    return value


def _agent_text(stack: Stack, finished: Finished) -> list[str]:
    session_id = finished.result()["session_id"]
    return [m["content"] for m in stack.api.messages(session_id) if m["author_type"] == "agent"]


# What the client cannot encode as a google.protobuf.Value, each as one update's `_meta`.
UNENCODABLE: dict[str, Any] = {"nested 60 deep": _nested(60),
                               "an integer beyond a double": 10 ** 400}


def test_updates_the_client_cannot_encode_are_skipped_not_a_hang(stack: Stack,
                                                                tmp_path: Path) -> None:
    bad: list[Step] = [
        {"update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"never stored: {name} "},
                    "_meta": {"x": value}}} for name, value in UNENCODABLE.items()]
    script: list[Step] = [{"update": say("before ")}, *bad, {"update": say("after")}]
    finished = launch(stack, tmp_path, script, "--prompt", PROMPT).finish_unhung(HANG_SECONDS)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    # The prompt is update #1, "before " #2, then the unencodable ones.
    for number in range(3, 3 + len(UNENCODABLE)):
        assert (f"update #{number} (agent_message_chunk) cannot be published: it "
                in finished.stderr)
    assert _agent_text(stack, finished) == ["before after"]


def test_a_lone_surrogate_is_stored_as_a_replacement_character(stack: Stack,
                                                              tmp_path: Path) -> None:
    """Valid JSON, but no UTF-8: an agent cutting its text by UTF-16 units splits a pair.
    The update is published, not skipped, with U+FFFD as the service's fold would draw."""
    script: list[Step] = [{"update": say("before ")}, {"update": say("cut \ud83d")},
                          {"update": say(" after")}]
    finished = launch(stack, tmp_path, script, "--prompt", PROMPT).finish_unhung(HANG_SECONDS)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "cannot be published" not in finished.stderr
    assert _agent_text(stack, finished) == ["before cut \ufffd after"]


def test_an_update_over_the_service_s_size_is_cut_and_keeps_the_call_s_ending(
        stack: Stack, tmp_path: Path) -> None:
    """Codex's final update repeats the whole output (`stdout`, `aggregated_output`): 2.2 MB
    of output made it 4.4 MB. It was skipped, and the call never ended. Cut to what the
    service keeps of its texts, it ends the call as the whole update would have."""
    output = "".join(f"line {n:07d} of the long build\n" for n in range(75_000))
    updates = [
        {"sessionUpdate": "tool_call", "toolCallId": "big", "kind": "execute",
         "status": "in_progress", "title": "make", "rawInput": {"command": ["make"]}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "big", "status": "completed",
         "rawOutput": {"stdout": output, "stderr": "", "aggregated_output": output,
                       "formatted_output": output[-10_000:], "exit_code": 0}}]
    finished = launch(stack, tmp_path, [{"update": update} for update in updates],
                      "--prompt", PROMPT).finish_unhung(HANG_SECONDS)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "update #3 (tool_call_update) is " in finished.stderr
    assert "its output fields are cut" in finished.stderr
    session_id = finished.result()["session_id"]
    [call] = [m for m in stack.api.messages(session_id) if m["type"] == "tool_execute"]
    expected = normalize_updates(updates, "", NO_MASKING)
    assert call["metadata"]["status"] == "complete"
    assert call["metadata"]["normalized"]["shell_exec"]["output"]["exit_code"] == 0
    served = stack.api.shell_output(session_id, call["id"])["output"]
    assert served["stdout"] == expected.output.stdout
    assert served["truncated"] == expected.output.truncated


def test_a_final_content_text_over_the_service_s_size_is_cut_and_ends_the_call(
        stack: Stack, tmp_path: Path) -> None:
    """grok repeats the whole output so far as the call's `content` text: 5 MB of it made
    the final update unpublishable, and the failed call was stored as cancelled."""
    output = "".join(f"line {n:07d} of the long build\n" for n in range(170_000))
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "tool_call", "toolCallId": "big", "kind": "execute",
         "status": "pending", "title": "Run build", "rawInput": {"command": "make all"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "big", "status": "failed",
         "content": [{"type": "content", "content": {"type": "text", "text": output}}]}]
    finished = launch(stack, tmp_path, [{"update": update} for update in updates],
                      "--agent", "grok", "--prompt", PROMPT).finish_unhung(HANG_SECONDS)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "its output fields are cut" in finished.stderr
    session_id = finished.result()["session_id"]
    [call] = [m for m in stack.api.messages(session_id) if m["type"] == "tool_execute"]
    # Served masked: a stream cut at its head may begin inside a secret.
    expected = normalize_updates(updates, "grok", Masking())
    assert call["metadata"]["status"] == "failed"
    served = stack.api.shell_output(session_id, call["id"])["output"]
    assert served["stdout"] == expected.output.stdout
    assert served["truncated"] is True


def test_updates_past_the_held_terminal_bound_are_skipped(stack: Stack,
                                                         tmp_path: Path) -> None:
    # ACP v2 terminal updates of a terminal no tool call names: the service holds at most
    # 256 of them per session and refuses the next ones with FAILED_PRECONDITION.
    over = 4
    held: list[Step] = [
        {"update": {"sessionUpdate": "terminal_update", "terminalId": "orphan",
                    "command": f"step {n}"}} for n in range(MAX_HELD_TERMINAL_UPDATES + over)]
    script: list[Step] = [{"update": say("before ")}, *held, {"update": say("after")}]
    finished = launch(stack, tmp_path, script, "--prompt", PROMPT).finish_unhung(HANG_SECONDS)

    assert finished.code == 0, finished.stderr[-3000:]
    first_refused = 2 + MAX_HELD_TERMINAL_UPDATES + 1
    assert (f"service refused update #{first_refused} (terminal_update): FAILED_PRECONDITION"
            in finished.stderr)
    assert f"; {over} refused" in finished.stderr
    assert _agent_text(stack, finished) == ["before after"]

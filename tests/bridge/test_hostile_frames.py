"""Frames a hostile agent writes to its stdout: one over the bridge's size cap, and ones that are
no JSON-RPC message the bridge takes. Each is dropped with one warning line (a flood of them
with a few tallies), without holding more than the cap in memory, and the session goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.hostile import Step, agent_text, request, run_raw, update
from bridge.provider_scripts import say

from shellexec.bridge.frames import MAX_FRAME_BYTES, MAX_FRAME_DEPTH, MAX_FRAME_VALUES

from support.stack import Stack

pytestmark = pytest.mark.slow

# Three times the cap: without a cap the bridge would hold the frame whole, at least twice.
HUGE_FRAME_BYTES = 3 * MAX_FRAME_BYTES
# The bridge's own peak memory may grow by less than this while it drops the frame: it holds
# at most the cap of a frame in the making.
MEMORY_BOUND_KIB = 2 * MAX_FRAME_BYTES // 1024
# A frame under the cap is held whole, twice while its parts are joined, and then refused for
# its value count before it is parsed. Parsed, 16 MiB of `0,` grew the bridge by about 1 GB.
VALUE_FLOOD_BOUND_KIB = 3 * MAX_FRAME_BYTES // 1024


def _deep_update(depth: int) -> str:
    meta = "[" * depth + "]" * depth
    return (f'{{"jsonrpc": "2.0", "method": "session/update", "params": {{"sessionId": '
            f'"raw-session", "update": {{"sessionUpdate": "agent_message_chunk", "content": '
            f'{{"type": "text", "text": "deep "}}, "_meta": {{"x": {meta}}}}}}}}}\n')


def test_a_frame_over_the_cap_is_dropped_without_being_held(stack: Stack, tmp_path: Path) -> None:
    script: list[Step] = [
        {"parent_peak_rss": True}, {"filler": HUGE_FRAME_BYTES}, {"raw": "\n"},
        # answered only once the bridge has read (and dropped) the whole frame
        request("fs/read_text_file", path="/nowhere"),
        {"parent_peak_rss": True}, update(say("still here"))]
    finished, record = run_raw(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    before, after = record["parent_peak_rss"]
    assert after - before < MEMORY_BOUND_KIB, f"the bridge grew by {after - before} KiB"
    warnings = [line for line in finished.stderr.splitlines() if "frame" in line]
    assert warnings == [f"shellexec bridge: agent sent a frame of {HUGE_FRAME_BYTES} bytes, "
                        f"over the bridge's limit of {MAX_FRAME_BYTES}: dropped"]
    assert "Traceback" not in finished.stderr


def _update_of_zeros(size: int) -> str:
    """A session/update frame of `size` bytes (newline included) that is mostly `0,0,0,...`."""
    head = ('{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": '
            '"raw-session", "update": {"sessionUpdate": "agent_message_chunk", "content": '
            '{"type": "text", "text": "zeros"}, "_meta": {"x": [')
    tail = "0]}}}}\n"
    zeros = (size - len(head) - len(tail)) // 2
    return head + "0," * zeros + tail


def test_a_frame_of_too_many_tiny_values_is_dropped_before_it_is_parsed(
        stack: Stack, tmp_path: Path) -> None:
    frame = _update_of_zeros(MAX_FRAME_BYTES)
    script: list[Step] = [
        update(say("before ")), {"parent_peak_rss": True}, {"raw": frame},
        request("fs/read_text_file", path="/nowhere"),  # answered once the frame was read
        {"parent_peak_rss": True}, update(say("after"))]
    finished, record = run_raw(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    before, after = record["parent_peak_rss"]
    assert after - before < VALUE_FLOOD_BOUND_KIB, f"the bridge grew by {after - before} KiB"
    warnings = [line for line in finished.stderr.splitlines() if "frame" in line]
    assert warnings == [f"shellexec bridge: agent sent a frame of {len(frame) - 1} bytes that "
                        "is no JSON-RPC message the bridge takes (it holds more than "
                        f"{MAX_FRAME_VALUES} JSON values): dropped"]
    assert "Traceback" not in finished.stderr
    assert agent_text(stack, finished) == ["before after"]


MALFORMED = {
    "batch": "[]\n",
    "null": "null\n",
    "not JSON": "{\"jsonrpc\": \n",
    "unhashable id": '{"jsonrpc": "2.0", "id": [1], "result": {}}\n',
    "boolean id": '{"jsonrpc": "2.0", "id": true, "result": {}}\n',
    "method not a string": '{"jsonrpc": "2.0", "method": ["session/update"]}\n',
    "error not an object": '{"jsonrpc": "2.0", "id": 0, "error": "no"}\n',
    # json.loads takes 750 levels, the SDK's copy.deepcopy for its observers did not
    "nested 750 deep": _deep_update(750),
    # past json.loads's own limit
    "nested 1200 deep": _deep_update(1200),
    "one level too deep": _deep_update(MAX_FRAME_DEPTH - 3),  # 4 levels lead to _meta.x
}


def test_frames_that_are_no_json_rpc_message_are_skipped_and_the_session_goes_on(
        stack: Stack, tmp_path: Path) -> None:
    script: list[Step] = [update(say("before ")), *({"raw": frame} for frame in
                                                    MALFORMED.values()),
                          update(say("after"))]
    finished, _ = run_raw(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    dropped = [line for line in finished.stderr.splitlines() if ": dropped" in line]
    assert len(dropped) == len(MALFORMED), "\n".join(dropped)
    assert agent_text(stack, finished) == ["before after"]


FLOOD = 150


def test_a_flood_of_dropped_frames_costs_a_few_lines(stack: Stack, tmp_path: Path) -> None:
    script: list[Step] = [update(say("before ")), {"raw": "[]\n" * FLOOD},
                          update(say("after"))]
    finished, _ = run_raw(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    lines = [line for line in finished.stderr.splitlines() if "frame" in line]
    one = ("shellexec bridge: agent sent a frame of 2 bytes that is no JSON-RPC message the "
           "bridge takes (a JSON array: a batch, which ACP does not use): dropped")
    assert lines == [one] * 9 + [one + "; more are only counted",
                                 "shellexec bridge: agent sent 100 frames the bridge dropped "
                                 "so far (the latest: a frame of 2 bytes that is no JSON-RPC "
                                 "message the bridge takes (a JSON array: a batch, which ACP "
                                 "does not use))"]
    assert agent_text(stack, finished) == ["before after"]


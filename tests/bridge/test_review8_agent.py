"""Review 8 (hostile agent): frames, requests and probes a compromised agent binary can send
the bridge over stdio, written by hand (`raw_agent.py`) since no SDK would send them. Each
test states what the bridge should do; they fail until the review's findings are fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Finished, launch
from bridge.provider_scripts import say

from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Do it."
RAW_AGENT = Path(__file__).resolve().with_name("raw_agent.py")
HANG_SECONDS = 60.0
INVALID_PARAMS = -32602
# The bridge's own peak memory may grow by less than this while it serves the agent; a frame
# or a file of 256 MiB must not be held whole (twice) in memory.
MEMORY_BOUND_KIB = 200 * 1024
_MIB = 1024 * 1024

Step = dict[str, Any]


def _update(update: dict[str, Any]) -> Step:
    return {"raw": json.dumps({"jsonrpc": "2.0", "method": "session/update",
                               "params": {"sessionId": "raw-session", "update": update}}) + "\n"}


def _deep_update(depth: int) -> str:
    meta = "[" * depth + "]" * depth
    return (f'{{"jsonrpc": "2.0", "method": "session/update", "params": {{"sessionId": '
            f'"raw-session", "update": {{"sessionUpdate": "agent_message_chunk", "content": '
            f'{{"type": "text", "text": "deep "}}, "_meta": {{"x": {meta}}}}}}}}}\n')


def _bridge(stack: Stack, workdir: Path, script: list[Step], *options: str,
            env: dict[str, str] | None = None) -> tuple[Finished, dict[str, Any]]:
    """Runs the bridge on the raw agent playing `script`; the run and the agent's record."""
    script_path, record_path = workdir / "raw-script.json", workdir / "raw-record.json"
    script_path.write_text(json.dumps(script))
    launched = launch(stack, workdir, [], "--prompt", PROMPT, *options, env=env,
                      command=[sys.executable, str(RAW_AGENT), str(script_path),
                               str(record_path)])
    try:
        finished = launched.finish(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        launched.process.kill()
        launched.process.wait()
        raise AssertionError("the bridge hung; stderr: "
                             + launched.stderr_path.read_text()[-3000:]) from None
    record: dict[str, Any] = json.loads(record_path.read_text())
    return finished, record


def _agent_text(stack: Stack, finished: Finished) -> list[str]:
    session_id = finished.result()["session_id"]
    return [m["content"] for m in stack.api.messages(session_id) if m["authorType"] == "agent"]


def test_a_frame_without_end_is_not_buffered_without_bound(stack: Stack,
                                                           tmp_path: Path) -> None:
    script: list[Step] = [
        {"parent_peak_rss": True}, {"filler": 256 * _MIB}, {"raw": "\n"},
        # answered only once the bridge has read (and dropped) the whole frame
        {"request": {"method": "fs/read_text_file",
                     "params": {"sessionId": "raw-session", "path": "/nowhere"}}},
        {"parent_peak_rss": True}, _update(say("still here"))]
    finished, record = _bridge(stack, tmp_path, script)

    before, after = record["parent_peak_rss"]
    assert after - before < MEMORY_BOUND_KIB, f"the bridge grew by {after - before} KiB"
    assert finished.code == 0, finished.stderr[-3000:]


def test_a_read_of_one_line_does_not_load_a_huge_file(stack: Stack, tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as out:
        for _ in range(256):
            out.write((b"y" * 1023 + b"\n") * 1024)
    script: list[Step] = [
        {"parent_peak_rss": True},
        {"request": {"method": "fs/read_text_file",
                     "params": {"sessionId": "raw-session", "path": str(big), "line": 1,
                                "limit": 1}}},
        {"parent_peak_rss": True}]
    finished, record = _bridge(stack, tmp_path, script, "--allow-fs-read")

    assert finished.code == 0, finished.stderr[-3000:]
    assert record["answers"][0]["result"] == {"content": "y" * 1023 + "\n"}
    before, after = record["parent_peak_rss"]
    assert after - before < MEMORY_BOUND_KIB, f"the bridge grew by {after - before} KiB"


def test_a_read_of_a_fifo_nobody_writes_does_not_keep_the_bridge_from_exiting(
        stack: Stack, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    request = {"jsonrpc": "2.0", "id": "never-answered", "method": "fs/read_text_file",
               "params": {"sessionId": "raw-session", "path": str(tmp_path / "pipe")}}
    script: list[Step] = [{"raw": json.dumps(request) + "\n"}, _update(say("done"))]
    finished, _ = _bridge(stack, tmp_path, script, "--allow-fs-read")

    assert finished.code == 0, finished.stderr[-3000:]
    assert _agent_text(stack, finished) == ["done"]


@pytest.mark.parametrize("frame", [
    pytest.param("[]\n", id="batch"),
    pytest.param("null\n", id="null"),
    pytest.param('{"jsonrpc": "2.0", "id": [1], "result": {}}\n', id="unhashable-id"),
    # json.loads takes 750 levels, the SDK's copy.deepcopy for its observers does not
    pytest.param(_deep_update(750), id="nested-750-deep"),
    # past json.loads's own limit
    pytest.param(_deep_update(1200), id="nested-1200-deep"),
])
def test_a_malformed_frame_is_skipped_and_the_session_goes_on(stack: Stack, tmp_path: Path,
                                                              frame: str) -> None:
    script: list[Step] = [_update(say("before ")), {"raw": frame}, _update(say("after"))]
    finished, _ = _bridge(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    assert _agent_text(stack, finished) == ["before after"]


@pytest.mark.parametrize(("method", "params"), [
    pytest.param("fs/read_text_file", {"path": "/tmp/a\u0000b"}, id="read-nul-path"),
    pytest.param("fs/write_text_file", {"path": "/tmp/a\u0000b", "content": "x"},
                 id="write-nul-path"),
    pytest.param("terminal/create", {"command": "echo a\u0000b"}, id="terminal-nul-command"),
    pytest.param("terminal/create", {"command": "true", "cwd": "a\u0000b"},
                 id="terminal-nul-cwd"),
    pytest.param("terminal/create",
                 {"command": "true", "env": [{"name": "X", "value": "a\u0000b"}]},
                 id="terminal-nul-env"),
])
def test_a_nul_byte_is_invalid_params_not_a_traceback(stack: Stack, tmp_path: Path,
                                                       method: str,
                                                       params: dict[str, Any]) -> None:
    script: list[Step] = [{"request": {"method": method,
                                       "params": {"sessionId": "raw-session", **params}}}]
    finished, record = _bridge(stack, tmp_path, script, "--allow-fs-read", "--allow-fs-write",
                               "--host-terminals")

    assert finished.code == 0, finished.stderr[-3000:]
    assert record["answers"][0]["error"]["code"] == INVALID_PARAMS, record["answers"]
    assert "Traceback" not in finished.stderr


def test_the_agent_cannot_read_what_the_bridge_keeps_out_of_its_environment(
        stack: Stack, tmp_path: Path) -> None:
    secrets = {"AWS_SECRET_ACCESS_KEY": "aws-secret", "SHELLEXEC_TOKEN": "shx-token"}
    script: list[Step] = [{"environ_of_parent": sorted(secrets)}]
    finished, record = _bridge(stack, tmp_path, script, env=secrets)

    assert finished.code == 0, finished.stderr[-3000:]
    assert record["environ_of_parent"] == []

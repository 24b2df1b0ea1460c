"""A hosted terminal linked to a call by the fallback rules alone is held unrecorded until
the link is sure (ADR 0087, since 2026-12-06): a call's content naming it, the end of the
call it was given, the release, or `LINK_SECONDS`. The bridge linked the terminal to the
open call at once and moved it once the agent named it in its own `tool_call` (ACP's flow:
`terminal/create`, then the call embedding it); what it had recorded into the first call
could not be taken back, since the service's fold gives the call's output to a terminal
for good (ADR 0085). A file read open meanwhile became a second record of the other call's
command, and a command the agent ran itself lost its own output."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Finished, run_bridge

from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.terminals import TerminalHost

from support.stack import Stack

pytestmark = pytest.mark.slow

Step = dict[str, Any]


def tool_call(call_id: str, title: str, **fields: Any) -> Step:
    return {"update": {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title,
                       "status": "in_progress", **fields}}


def tool_update(call_id: str, **fields: Any) -> Step:
    return {"update": {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}}


def naming(terminal: str) -> list[dict[str, str]]:
    return [{"type": "terminal", "terminalId": f"@{terminal}"}]


def run(stack: Stack, workdir: Path, steps: list[Step]) -> Finished:
    finished = run_bridge(stack, workdir, steps, "--host-terminals", "--agent", "goose",
                          "--prompt", "Run it.")
    assert finished.code == 0, finished.stderr
    return finished


def tools(stack: Stack, finished: Finished) -> list[dict[str, Any]]:
    session_id = finished.result()["session_id"]
    return [m for m in stack.api.messages(session_id) if m["type"].startswith("tool")]


def output_of(stack: Stack, finished: Finished, message: dict[str, Any]) -> dict[str, Any]:
    output: dict[str, Any] = stack.api.shell_output(finished.result()["session_id"],
                                                    message["id"])
    return output


def test_a_file_read_open_while_a_terminal_starts_stays_a_file_read(
        stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("read", "Read notes.txt", kind="read", rawInput={"path": "notes.txt"}),
        {"terminal": {"command": "echo D-OUTPUT"}, "as": "t1"},  # rule 4 gives it `read`
        {"terminal_wait": "t1"},
        tool_call("run", "echo D-OUTPUT", kind="execute", content=naming("t1"),
                  rawInput={"command": "echo D-OUTPUT"}),
        tool_update("run", status="completed"),
        {"terminal_release": "t1"},
        tool_update("read", status="completed", content=[
            {"type": "content", "content": {"type": "text", "text": "hello notes"}}]),
    ])
    read, command = tools(stack, finished)
    # Before: a `tool_execute` of `echo D-OUTPUT` with no output and no exit code.
    assert (read["type"], read["content"]) == ("tool_call", "Read notes.txt")
    assert command["type"] == "tool_execute"
    shell = output_of(stack, finished, command)
    assert shell["status"] == "complete"
    assert shell["output"] == {"exit_code": 0, "stdout": "D-OUTPUT\n", "truncated": False}


def test_a_command_the_agent_runs_itself_keeps_its_own_output(
        stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("own", "cat notes.txt", kind="execute", rawInput={"command": "cat notes.txt"}),
        tool_update("own", content=[
            {"type": "content", "content": {"type": "text", "text": "OWN-BEFORE\n"}}]),
        {"terminal": {"command": "echo HOSTED; exit 5"}, "as": "t1"},  # rule 3 gives it `own`
        {"terminal_wait": "t1"},
        tool_call("hosted", "echo HOSTED; exit 5", kind="execute", content=naming("t1"),
                  rawInput={"command": "echo HOSTED; exit 5"}),
        tool_update("hosted", status="failed"),
        {"terminal_release": "t1"},
        tool_update("own", status="completed",
                    rawOutput={"stdout": "OWN-AFTER\n", "exit_code": 0}),
    ])
    own, hosted = tools(stack, finished)
    # Before: `complete` with an empty output, which the terminal owned once cleared.
    assert own["content"] == "cat notes.txt"
    own_shell = output_of(stack, finished, own)
    assert own_shell["status"] == "complete"
    assert own_shell["output"] == {"exit_code": 0, "stdout": "OWN-AFTER\n", "truncated": False}
    hosted_shell = output_of(stack, finished, hosted)
    assert hosted_shell["status"] == "failed"
    assert hosted_shell["output"] == {"exit_code": 5, "stdout": "HOSTED\n", "truncated": False}


def _recorded_output(updates: list[dict[str, Any]]) -> bytes:
    return b"".join(base64.b64decode(update["data"]) for update in updates
                    if update["sessionUpdate"] == "terminal_output_chunk")


# Bounds a wait for what a working host does within milliseconds; no assertion reads a time.
WAIT_SECONDS = 30.0


async def _until(condition: Callable[[], bool]) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "never happened"
        await asyncio.sleep(0.01)


def test_a_terminal_no_content_names_is_recorded_into_its_call_once_that_call_ends(
        tmp_path: Path) -> None:
    """Agents that never name their terminals (Goose, Kimi, Vibe) still get the output into
    the call the fallback rules chose once the hold ends (here by that call's end; the hold
    is never longer than LINK_SECONDS): the command so far, then each read as it comes."""
    recorded: list[dict[str, Any]] = []
    calls = OpenCalls()
    calls.observe({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "make",
                   "kind": "execute", "status": "in_progress"})
    go = tmp_path / "go"
    command = f"echo first; while [ ! -e {go} ]; do sleep 0.01; done; echo second; sleep 30"

    async def scenario() -> None:
        host = TerminalHost(tmp_path, dict(os.environ), 60, recorded.append, calls,
                            link_seconds=3600)
        terminal_id = await host.create(command, None, None, None, None)
        await _until(lambda: host.output(terminal_id)[0] == "first\n")
        assert recorded == []  # held: another call may yet name it
        calls.observe({"sessionUpdate": "tool_call_update", "toolCallId": "c1",
                       "status": "completed"})
        host.before_recording()  # the call's end is about to be recorded
        assert [update["sessionUpdate"] for update in recorded] == [
            "terminal_update", "terminal_output_chunk"]
        assert recorded[0]["command"] == command
        assert all(update["_meta"] == {"shellexec_tool_call_id": "c1"}
                   for update in recorded)
        assert _recorded_output(recorded) == b"first\n"
        go.touch()  # recorded as it comes now, while it runs
        await _until(lambda: _recorded_output(recorded) == b"first\nsecond\n")
        await host.stop_all()

    asyncio.run(scenario())
    assert recorded[-1]["exitStatus"]["signal"] == "SIGKILL"


def test_a_call_naming_the_terminal_after_the_hold_gets_it_moved(tmp_path: Path) -> None:
    """Past the hold (no time at all here) the terminal was recorded into the fallback call:
    a call naming it later still gets it, and what was recorded into the first call is
    cleared there."""
    recorded: list[dict[str, Any]] = []
    calls = OpenCalls()
    for call_id in ("c1", "c2"):
        calls.observe({"sessionUpdate": "tool_call", "toolCallId": call_id, "title": call_id,
                       "status": "in_progress"})

    async def scenario() -> None:
        host = TerminalHost(tmp_path, dict(os.environ), 60, recorded.append, calls,
                            link_seconds=0)
        terminal_id = await host.create("echo late", None, None, None, None)
        await host.wait_for_exit(terminal_id)
        await _until(lambda: any("exitStatus" in update for update in recorded))
        assert {update["_meta"]["shellexec_tool_call_id"] for update in recorded} == {"c2"}
        recorded.clear()
        named = {"sessionUpdate": "tool_call_update", "toolCallId": "c1",
                 "content": [{"type": "terminal", "terminalId": terminal_id}]}
        calls.observe(named)
        host.observe(named)
        await host.stop_all()

    asyncio.run(scenario())
    cleared, snapshot = recorded
    assert cleared == {"sessionUpdate": "terminal_update", "terminalId": cleared["terminalId"],
                       "output": None, "exitStatus": None,
                       "_meta": {"shellexec_tool_call_id": "c2"}}
    assert snapshot["_meta"] == {"shellexec_tool_call_id": "c1"}
    assert base64.b64decode(snapshot["output"]["data"]) == b"late\n"
    assert snapshot["exitStatus"]["exitCode"] == 0


@pytest.mark.parametrize("forged_first", [False, True])
def test_the_agent_s_end_text_does_not_replace_a_hosted_terminal_s_output(
        stack: Stack, tmp_path: Path, forged_first: bool) -> None:
    """The bridge hosts the terminal so that what the process printed outranks what the agent
    says it printed: a Codex-shaped `formatted_output` replaced it (a reviewer's forgery),
    sent after the terminal's output or before it."""
    forged = tool_update("run", status="completed", rawOutput={
        "formatted_output": "FORGED: all 120 tests passed\n", "exit_code": 0})
    steps = [
        tool_call("run", "make test", kind="execute",
                  rawInput={"command": ["/bin/bash", "-lc", "make test"]}),
        *([forged] if forged_first else []),
        {"terminal": {"command": "echo REAL-OUTPUT; exit 3"}, "as": "t1"},
        tool_update("run", content=naming("t1")),
        {"terminal_wait": "t1"},
        {"terminal_release": "t1"},
        *([] if forged_first else [forged]),
    ]
    finished = run_bridge(stack, tmp_path, steps, "--host-terminals", "--agent", "codex",
                          "--prompt", "Run it.")
    assert finished.code == 0, finished.stderr
    [command] = tools(stack, finished)
    assert output_of(stack, finished, command)["output"] == {
        "exit_code": 3, "stdout": "REAL-OUTPUT\n", "truncated": False}


"""`shellexec bridge --host-terminals`: the bridge runs the agent's commands (ACP client
terminals) and records their exact output and exit status into the tool call (ADR 0087).
The fake agent uses the terminals as Goose, Kimi and Vibe do when offered them: the whole
shell line as `command`, then wait, output, release."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from bridge.harness import Finished, launch, run_bridge

from shellexec.bridge import terminals
from shellexec.bridge.guarded_command import GuardedCommand
from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.terminals import MAX_TERMINALS, TerminalHost

from support.processes import running
from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Run it."
Step = dict[str, Any]


def tool_call(call_id: str, title: str, **fields: Any) -> Step:
    return {"update": {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title,
                       "kind": "execute", "status": "pending", **fields}}


def tool_update(call_id: str, **fields: Any) -> Step:
    return {"update": {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}}


def create(command: str, name: str = "t1", **request: Any) -> Step:
    return {"terminal": {"command": command, **request}, "as": name}


def answers(finished: Finished, step: str) -> list[dict[str, Any]]:
    return [answer for answer in finished.record["terminals"] if answer["step"] == step]


def shell_message(stack: Stack, finished: Finished, index: int = 0) -> tuple[dict[str, Any],
                                                                             dict[str, Any]]:
    """The session's `index`-th tool message and its shell output."""
    session_id = finished.result()["session_id"]
    tools = [m for m in stack.api.messages(session_id) if m["type"].startswith("tool")]
    message = tools[index]
    return message, stack.api.shell_output(session_id, message["id"])


def run(stack: Stack, workdir: Path, steps: list[Step], *options: str,
        env: dict[str, str] | None = None) -> Finished:
    finished = run_bridge(stack, workdir, steps, "--host-terminals", "--agent", "goose",
                          "--prompt", PROMPT, *options, env=env)
    assert finished.code == 0, finished.stderr
    return finished


def test_a_successful_command_is_recorded_exactly_whatever_the_agent_reports(
        stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("c1", "shell · build"),
        create("printf 'hello\\n'; printf 'world\\n' >&2"),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"terminal_wait": "t1"}, {"terminal_output": "t1"}, {"terminal_release": "t1"},
        # The agent's own report: a tail and a made-up exit code.
        tool_update("c1", status="completed", content=[
            {"type": "content", "content": {"type": "text", "text": "world (tail)"}}],
            rawOutput={"stdout": "world (tail)", "stderr": "", "exit_code": 7}),
    ])
    assert finished.record["initialize"]["clientCapabilities"]["terminal"] is True
    assert answers(finished, "terminal_wait") == [{"step": "terminal_wait", "exitCode": 0,
                                                   "signal": None, "_meta": None}]
    output = answers(finished, "terminal_output")[0]
    assert (output["output"], output["truncated"]) == ("hello\nworld\n", False)
    assert output["exitStatus"]["exitCode"] == 0

    message, shell = shell_message(stack, finished)
    assert message["type"] == "tool_execute"
    assert message["metadata"]["normalized"]["shell_exec"]["work_dir"] == str(tmp_path)
    assert shell["status"] == "complete"
    assert shell["output"] == {"exit_code": 0, "stdout": "hello\nworld\n", "truncated": False}


def test_the_agent_s_own_terminal_updates_are_not_recorded(stack: Stack,
                                                          tmp_path: Path) -> None:
    """While the bridge hosts terminals, terminal updates the agent sends itself, with
    made-up output and exit code, overwrote the exact record: naming the hosted terminal
    (its id is `terminal/create`'s answer), or a terminal of its own that the call names or
    that carries the bridge's link to the call."""
    fake = base64.b64encode(b"FAKE-OUTPUT\n").decode("ascii")

    def forged(terminal_id: str, **fields: Any) -> Step:
        return {"update": {"sessionUpdate": "terminal_update", "terminalId": terminal_id,
                           "output": {"data": fake}, "exitStatus": {"exitCode": 0},
                           **fields}}

    finished = run(stack, tmp_path, [
        tool_call("c1", "shell · build"),
        create("echo REAL-OUTPUT; exit 5"),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"terminal_wait": "t1"},
        forged("@t1"),
        {"update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "@t1",
                    "data": fake}},
        forged("own-1", _meta={"shellexec_tool_call_id": "c1"}),
        forged("own-2"),
        tool_update("c1", content=[{"type": "terminal", "terminalId": "@t1"},
                                   {"type": "terminal", "terminalId": "own-2"}]),
        {"terminal_release": "t1"},
        forged("@t1"),  # a released terminal is still the bridge's
        tool_update("c1", status="completed"),
    ])
    assert answers(finished, "terminal_wait")[0]["exitCode"] == 5
    _, shell = shell_message(stack, finished)
    assert shell["status"] == "failed"
    assert shell["output"] == {"exit_code": 5, "stdout": "REAL-OUTPUT\n", "truncated": False}
    warnings = [line for line in finished.stderr.splitlines()
                if "while the bridge hosts terminals it alone reports them" in line]
    assert len(warnings) == 5, finished.stderr
    assert "agent sent a terminal_update of terminal 'own-1'" in warnings[2]
    assert "; 5 refused" in finished.stderr


def test_a_failing_command_links_to_the_open_shell_call_and_fails_it(
        stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("c0", "read notes", kind="read", status="in_progress"),
        tool_call("c1", "Shell: make", status="in_progress"),
        create("echo oops; exit 3"),  # no content names the terminal: rule 2
        {"terminal_wait": "t1"}, {"terminal_release": "t1"},
        tool_update("c1", status="completed"),  # the agent says completed
        tool_update("c0", status="completed"),
    ])
    assert answers(finished, "terminal_wait")[0]["exitCode"] == 3
    tools = stack.api.messages(finished.result()["session_id"])
    assert [m["type"] for m in tools[1:]] == ["tool_call", "tool_execute"]  # after the prompt
    message, shell = shell_message(stack, finished, 1)
    assert message["content"] == "echo oops; exit 3"
    assert shell["status"] == "failed"
    assert shell["output"] == {"exit_code": 3, "stdout": "oops\n", "truncated": False}


def test_calls_announced_before_their_terminals_each_get_their_own(
        stack: Stack, tmp_path: Path) -> None:
    """Goose announces its calls, then runs them, naming no terminal: both terminals went to
    the second call, with the first command's output and exit code."""
    first, second = "echo AAA; exit 3", "echo BBB"
    finished = run(stack, tmp_path, [
        tool_call("a", f"shell · {first}", rawInput={"command": first}),
        tool_call("b", f"shell · {second}", rawInput={"command": second}),
        create(first, "ta"), create(second, "tb"),
        {"terminal_wait": "tb"}, {"terminal_release": "tb"},
        tool_update("b", status="completed", rawOutput={"stdout": "BBB\n", "stderr": ""}),
        {"terminal_wait": "ta"}, {"terminal_release": "ta"},
        tool_update("a", status="failed", rawOutput={"stdout": "AAA\n", "stderr": ""}),
    ])
    for index, (command, exit_code, stdout, status) in enumerate([
            (first, 3, "AAA\n", "failed"), (second, 0, "BBB\n", "complete")]):
        message, shell = shell_message(stack, finished, index)
        assert message["content"] == command
        assert message["metadata"]["normalized"]["shell_exec"]["work_dir"] == str(tmp_path)
        assert shell["status"] == status
        assert shell["output"] == {"exit_code": exit_code, "stdout": stdout, "truncated": False}


def test_the_output_byte_limit_keeps_the_newest_whole_characters(
        stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("c1", "print"),
        create("printf 'ééééééééé'", outputByteLimit=5),  # 18 bytes; the limit cuts an é
        {"terminal_wait": "t1"}, {"terminal_output": "t1"}, {"terminal_release": "t1"},
        tool_update("c1", status="completed"),
    ])
    output = answers(finished, "terminal_output")[0]
    assert (output["output"], output["truncated"]) == ("éé", True)
    _, shell = shell_message(stack, finished)
    assert shell["output"]["stdout"] == "ééééééééé"  # the record keeps its own bound


def test_a_killed_command_reports_its_signal_and_fails(stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("c1", "wait"),
        create("echo waiting; exec sleep 60"),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"terminal_kill": "t1"}, {"terminal_wait": "t1"}, {"terminal_output": "t1"},
        {"terminal_release": "t1"},
        tool_update("c1", status="completed", rawOutput={"returncode": 0}),  # as Vibe says
    ])
    assert answers(finished, "terminal_wait")[0]["signal"] == "SIGKILL"
    assert answers(finished, "terminal_wait")[0]["exitCode"] is None
    _, shell = shell_message(stack, finished)
    assert shell["status"] == "failed"
    assert "exit_code" not in shell["output"]


def test_an_unknown_terminal_is_invalid_params(stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [{"terminal_output": "term_nope"}])
    assert answers(finished, "terminal_output")[0]["error"]["code"] == -32602


def test_without_the_option_terminals_are_not_offered(stack: Stack, tmp_path: Path) -> None:
    finished = run_bridge(stack, tmp_path, [create("true")], "--prompt", PROMPT)
    assert finished.code == 0, finished.stderr
    assert finished.record["initialize"]["clientCapabilities"].get("terminal", False) is False
    assert answers(finished, "terminal")[0]["error"]["code"] == -32601


def test_directory_outside_the_tree_and_environment(stack: Stack, tmp_path: Path) -> None:
    inside = tmp_path / "sub"
    inside.mkdir()
    finished = run(stack, tmp_path, [
        tool_call("c1", "where"),
        create("pwd; echo \"$ASKED-${BRIDGE_ONLY:-unset}\"", cwd="/",
               env=[{"name": "ASKED", "value": "given"}]),
        {"terminal_wait": "t1"}, {"terminal_release": "t1"},
        tool_call("c2", "where again"),
        create("pwd", name="t2", cwd=str(inside)),
        {"terminal_wait": "t2"}, {"terminal_release": "t2"},
        tool_update("c1", status="completed"), tool_update("c2", status="completed"),
    ], env={"BRIDGE_ONLY": "secret-of-the-bridge"})
    _, first = shell_message(stack, finished, 0)
    assert first["output"]["stdout"] == f"{tmp_path}\ngiven-unset\n"
    _, second = shell_message(stack, finished, 1)
    assert second["output"]["stdout"] == f"{inside}\n"


def test_terminals_created_at_once_are_held_to_64(stack: Stack, tmp_path: Path) -> None:
    """Each create was checked against the terminals already running, before its own
    started: 300 sent together all started (3 GB of guards)."""
    burst = [create("sleep 30", f"t{n}") for n in range(MAX_TERMINALS + 6)]
    finished = run(stack, tmp_path, [tool_call("c1", "burst"), {"together": burst}])
    created = answers(finished, "terminal")
    refused = [answer for answer in created if "error" in answer]
    assert len(created) == MAX_TERMINALS + 6
    assert len(refused) == 6
    assert all(answer["error"]["code"] == -32600 for answer in refused)  # invalid request
    assert "Traceback" not in finished.stderr


def test_a_terminal_starting_while_all_are_stopped_is_stopped_too(tmp_path: Path) -> None:
    """`stop_all` (a cancel, the bridge stopping) came while a create was starting its
    command: that one was added after the stop had taken its list, and ran on."""
    marker = tmp_path / "started"

    async def scenario() -> None:
        host = TerminalHost(tmp_path, dict(os.environ), 60, lambda update: None, OpenCalls())
        starting = asyncio.ensure_future(
            host.create(f"touch {marker}; sleep 30", None, None, None, None))
        await asyncio.sleep(0)  # the create has begun starting its guard
        await host.stop_all()
        with pytest.raises(RequestError):
            await starting

    asyncio.run(scenario())
    assert running(lambda command: str(marker).encode() in command) == []


def test_all_terminals_are_told_to_end_before_any_has_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`stop_all` ended the terminals one after the other: commands that keep their guards
    stopped cost up to five seconds each, and 24 kept a stopping bridge for 19 s, deaf to a
    second Ctrl-C. They now end together: every guard is told before any terminal is done."""
    happened: list[str] = []
    end, close = GuardedCommand.end, terminals._close_pipes

    def recording_end(command: GuardedCommand) -> None:
        happened.append(f"told {command.guard.pid}")
        end(command)

    def recording_close(command: GuardedCommand) -> None:
        happened.append(f"done {command.guard.pid}")
        close(command)

    monkeypatch.setattr(GuardedCommand, "end", recording_end)
    monkeypatch.setattr(terminals, "_close_pipes", recording_close)

    async def scenario() -> None:
        host = TerminalHost(tmp_path, dict(os.environ), 60, lambda update: None, OpenCalls())
        for _ in range(3):
            await host.create("exec sleep 300", None, None, None, None)
        await host.stop_all()

    asyncio.run(scenario())
    told = [index for index, event in enumerate(happened) if event.startswith("told")]
    done = [index for index, event in enumerate(happened) if event.startswith("done")]
    assert len(done) == 3, happened
    assert max(told) < min(done), happened


# Runs its arguments with SIGCHLD ignored, which survives exec, as a parent may leave it.
IGNORING_SIGCHLD = (sys.executable, "-c", "import os, signal, sys; signal.signal("
                    "signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])")


def test_a_bridge_started_with_sigchld_ignored_takes_it_back(stack: Stack,
                                                             tmp_path: Path) -> None:
    """With SIGCHLD ignored (as a parent may leave it: it survives exec) the kernel reaps each
    guard at its exit, and the bridge can no longer keep an exited guard's pid its own: its
    sweep went by a number free again, and its release signalled and waited for whoever had
    the pid next. The bridge sets SIGCHLD back to its default when it starts: a hosted
    command reads the bridge's ignored signals (its guard's parent's) from /proc."""
    finished = launch(stack, tmp_path, [
        tool_call("c1", "shell · signals"),
        create("bridge=$(awk '/^PPid:/ {print $2}' /proc/$PPID/status); "
               "awk '/^SigIgn:/ {print $2}' /proc/$bridge/status"),
        {"terminal_wait": "t1"}, {"terminal_output": "t1"}, {"terminal_release": "t1"},
        tool_update("c1", status="completed"),
    ], "--host-terminals", "--agent", "goose", "--prompt", PROMPT,
        wrapper=IGNORING_SIGCHLD).finish()

    assert finished.code == 0, finished.stderr
    [output] = answers(finished, "terminal_output")
    ignored = int(output["output"].strip(), 16)
    assert not ignored & (1 << (signal.SIGCHLD - 1)), output


def test_stop_all_waits_for_a_terminal_being_released(tmp_path: Path) -> None:
    """`release` takes a terminal out of the table before it ends it, so `stop_all` did not
    wait for it; and the connection closing as the bridge stops cancelled the release, so a
    command keeping its guard stopped ran on."""
    marker = tmp_path / "still-here"

    async def scenario() -> None:
        host = TerminalHost(tmp_path, dict(os.environ), 60, lambda update: None, OpenCalls())
        terminal_id = await host.create(
            f"trap '' TERM; while :; do touch {marker}; kill -STOP $PPID; sleep 0.05; done",
            None, None, None, None)
        releasing = asyncio.ensure_future(host.release(terminal_id))
        await asyncio.sleep(0)  # the release has taken it out of the table
        releasing.cancel()  # as the connection closing does
        await host.stop_all()
        with contextlib.suppress(asyncio.CancelledError):
            await releasing

    asyncio.run(scenario())
    assert running(lambda command: str(marker).encode() in command) == []


def test_a_terminal_no_call_names_is_recorded_again_with_what_its_job_printed_late(
        tmp_path: Path) -> None:
    """A terminal created while no call is open is recorded as one snapshot when its shell
    exits (ADR 0123); what a background job printed after that was not read at all. Now the
    snapshot is taken again once the output ended."""
    go = tmp_path / "go"
    recorded: list[dict[str, Any]] = []

    async def printed(host: TerminalHost, terminal_id: str, text: str) -> None:
        while text not in host.output(terminal_id)[0]:
            await asyncio.sleep(0.05)

    async def scenario() -> None:
        host = TerminalHost(tmp_path, dict(os.environ), 60, recorded.append, OpenCalls())
        terminal_id = await host.create(
            f"(while [ ! -e {go} ]; do sleep 0.05; done; echo late) & echo early",
            None, None, None, None)
        await host.wait_for_exit(terminal_id)
        go.touch()
        await asyncio.wait_for(printed(host, terminal_id, "late"), 30)
        await host.release(terminal_id)

    asyncio.run(scenario())
    assert [base64.b64decode(update["output"]["data"]) for update in recorded] == [
        b"early\n", b"early\nlate\n"]
    assert [update["exitStatus"]["exitCode"] for update in recorded] == [0, 0]


def test_a_command_past_the_timeout_is_killed(stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("c1", "slow"), create("exec sleep 60"),
        {"terminal_wait": "t1"}, {"terminal_release": "t1"},
        tool_update("c1", status="failed"),
    ], "--terminal-timeout", "0.2")
    assert answers(finished, "terminal_wait")[0]["signal"] == "SIGKILL"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_cancel_kills_the_whole_process_group_and_keeps_the_output(
        stack: Stack, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    launched = launch(stack, tmp_path, [
        tool_call("c1", "serve"),
        create(f"echo started; sleep 60 & echo $! > {pid_file}; wait"),
        tool_update("c1", status="in_progress",
                    content=[{"type": "terminal", "terminalId": "@t1"}]),
        {"wait_for_file": str(pid_file)},
        {"mark": "running"},
        {"wait_for_cancel": 30},
    ], "--host-terminals", "--prompt", PROMPT)
    launched.wait_for_mark("running")
    child = int(pid_file.read_text().strip() or "0")
    assert _alive(child)
    launched.process.send_signal(signal.SIGINT)
    finished = launched.finish()
    assert finished.code == 130, finished.stderr
    assert not _alive(child)
    _, shell = shell_message(stack, finished)
    assert shell["status"] == "cancelled"
    assert shell["output"]["stdout"] == "started\n"
    assert os.getpgid(os.getpid()) != child


def test_a_terminal_named_by_another_call_moves_there_with_its_output(
        stack: Stack, tmp_path: Path) -> None:
    finished = run(stack, tmp_path, [
        tool_call("c1", "first", status="in_progress"),
        tool_call("c2", "second", status="in_progress"),
        create("echo from-the-terminal"),  # rule 2 picks c2, the most recent open call
        {"terminal_wait": "t1"},
        tool_update("c1", content=[{"type": "terminal", "terminalId": "@t1"}]),  # rule 1
        {"terminal_release": "t1"},
        tool_update("c1", status="completed"), tool_update("c2", status="completed"),
    ])
    _, first = shell_message(stack, finished, 0)
    assert first["output"] == {"exit_code": 0, "stdout": "from-the-terminal\n",
                               "truncated": False}
    # Held while only the fallback rules gave it to c2 (since 2026-12-06): nothing of it was
    # recorded there, so c2 is as the agent left it (before, a terminal-owned empty output).
    _, second = shell_message(stack, finished, 1)
    assert second["output"] == {"truncated": False}

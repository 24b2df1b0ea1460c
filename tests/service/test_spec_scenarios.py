"""The specification's scenarios that concern persistence, projection, the shell-output endpoint
and late updates, each through Envoy's REST front door as a browser or agent would call it.
(The rendering scenarios are in tests/web; the pure normalization rules in tests/normalize.)"""

from __future__ import annotations

import json

from support.acp import codex_delta, codex_end, codex_start, load_fixture
from support.stack import Stack


def test_scenario_codex_deltas_then_formatted_output_and_exit_4(stack: Stack) -> None:
    session = stack.api.new_session(agent="codex")
    stack.api.start_turn(session["id"])
    message_id = stack.api.play(session["id"], [
        codex_start("sc1", "make test"), codex_delta("sc1", "line one\n")])
    assert stack.api.shell_output(session["id"], message_id)["output"]["stdout"] == "line one\n"
    stack.api.publish(session["id"], codex_delta("sc1", "line two\n"))
    stack.api.publish(session["id"], codex_end("sc1", "line one\nline two\n", 4))
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"]["stdout"] == "line one\nline two\n"
    assert final["output"]["exit_code"] == 4
    assert final["status"] == "failed"


def test_scenario_claude_terminal_output_then_terminal_exit(stack: Stack) -> None:
    session = stack.api.new_session(agent="claude")
    message_id = stack.api.play(session["id"], load_fixture("claude-terminal-failure"))
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"]["stdout"] == (
        "Exit code 2\nls: cannot access '/nonexistent': No such file or directory")
    assert final["output"]["exit_code"] == 2
    summary = stack.api.shell_exec(session["id"], message_id)
    assert summary["output"]["exit_code"] == 2


def test_claude_terminal_output_replaces_the_output_shown(stack: Stack) -> None:
    """The spec's Claude rule, with two snapshots where the second does not extend the first:
    it was appended to the first."""
    session = stack.api.new_session(agent="claude")
    call = load_fixture("claude-terminal-failure")[:3]
    snapshot = {"sessionUpdate": "tool_call_update", "toolCallId": call[0]["toolCallId"]}
    message_id = stack.api.play(session["id"], [
        *call,
        {**snapshot, "_meta": {"terminal_output": {"data": "first snapshot\n"}}},
        {**snapshot, "_meta": {"terminal_output": {"data": "replacement\n"}}},
        {**snapshot, "status": "completed", "_meta": {"terminal_exit": {"exit_code": 0}}},
    ])
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"]["stdout"] == "replacement\n"
    assert final["status"] == "complete"


def test_scenario_opencode_cumulative_content_then_exit_7_while_completed(
        stack: Stack) -> None:
    session = stack.api.new_session(agent="opencode")
    running = {"sessionUpdate": "tool_call_update", "toolCallId": "oc7",
               "status": "in_progress", "kind": "execute", "title": "npm test",
               "rawInput": {"command": "npm test", "cwd": "/proj"}}
    message_id = stack.api.play(session["id"], [
        {"sessionUpdate": "tool_call", "toolCallId": "oc7", "title": "bash",
         "kind": "execute", "status": "pending", "rawInput": {"cwd": "/proj"}},
        {**running, "content": [{"type": "content",
                                 "content": {"type": "text", "text": "1 passing\n"}}]},
        {**running, "content": [{"type": "content",
                                 "content": {"type": "text", "text": "1 passing\n1 failing\n"}}]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "oc7", "status": "completed",
         "rawOutput": {"output": "1 passing\n1 failing\n",
                       "metadata": {"output": "1 passing\n1 failing\n", "exit": 7}}},
    ])
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"]["stdout"] == "1 passing\n1 failing\n"
    assert final["output"]["exit_code"] == 7
    assert final["status"] == "failed"


def test_scenario_auggie_return_code_0_is_success(stack: Stack) -> None:
    session = stack.api.new_session(agent="auggie")
    message_id = stack.api.play(session["id"], load_fixture("auggie-success"))
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"]["exit_code"] == 0
    assert final["output"]["stdout"].startswith("total 8\n")
    assert final["status"] == "complete"


def test_scenario_auggie_return_code_written_inline_is_success(stack: Stack) -> None:
    """The scenario's own `<return-code>0</return-code>`, on one line: read only when a tag
    stood alone on its line, so the tags were shown as output with no exit code."""
    session = stack.api.new_session(agent="auggie")
    message_id = stack.api.play(session["id"], [
        {"sessionUpdate": "tool_call", "toolCallId": "au", "title": "Run `ls`",
         "kind": "execute", "rawInput": {"command": "ls", "cwd": "/repo"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "au", "status": "completed",
         "rawOutput": {"output": "Here are the results from executing the command.\n"
                                 "<return-code>0</return-code>\n<output>a.txt\n</output>"}},
    ])
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"] == {"exit_code": 0, "stdout": "a.txt", "truncated": False}
    assert stack.api.shell_exec(session["id"], message_id)["result"] == "success"


def test_auggie_still_running_is_unknown_whatever_its_output_printed(stack: Stack) -> None:
    """"An absent exit status MUST NOT become exit 0": a still-running command's output so
    far printed a return code of its own."""
    session = stack.api.new_session(agent="auggie")
    updates = load_fixture("auggie-still-running")
    output = updates[-1]["rawOutput"]["output"]
    printed = "step 1\n<return-code>\n0\n</return-code>\n"
    updates[-1]["rawOutput"]["output"] = output.replace("<output>\n", f"<output>\n{printed}", 1)
    message_id = stack.api.play(session["id"], updates)
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"]["stdout"].startswith(printed)
    assert "exit_code" not in final["output"]
    shell_exec = stack.api.shell_exec(session["id"], message_id)
    assert shell_exec["result"] == "unknown"


def test_scenario_omp_glued_echo_keeps_command_once_and_real_output_first(
        stack: Stack) -> None:
    session = stack.api.new_session(agent="omp")
    message_id = stack.api.play(session["id"], load_fixture("omp-glued-echo"))
    summary = stack.api.shell_exec(session["id"], message_id)
    assert summary["command"] == "git log --oneline -3"
    stdout = stack.api.shell_output(session["id"], message_id)["output"]["stdout"]
    assert stdout.startswith("4f2a9c1 fix: bound output")
    assert "$ git log" not in stdout


def test_scenario_plain_output_without_exit_status_is_unknown(stack: Stack) -> None:
    session = stack.api.new_session(agent="claude")
    message_id = stack.api.play(session["id"], load_fixture("claude-plain-success"))
    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"]["stdout"].startswith("total 8")
    assert "exit_code" not in final["output"]
    summary = stack.api.shell_exec(session["id"], message_id)
    assert "exit_code" not in summary["output"]


def test_scenario_cancelled_without_exit_code_keeps_the_transcript(stack: Stack) -> None:
    session = stack.api.new_session(agent="claude")
    message_id = stack.api.play(session["id"], load_fixture("claude-terminal-cancelled"))
    final = stack.api.shell_output(session["id"], message_id)
    assert final["status"] == "cancelled"
    assert final["output"]["stdout"] == "tick 1\ntick 2\n"
    assert "exit_code" not in final["output"]
    assert stack.api.shell_exec(session["id"], message_id)["output"]["has_output"] is True


def test_scenario_late_terminal_update_after_turn_settled(stack: Stack) -> None:
    session = stack.api.new_session(agent="codex")
    turn = stack.api.start_turn(session["id"])
    message_id = stack.api.play(session["id"], [
        codex_start("late", "cargo build"), codex_delta("late", "Compiling\n")])
    stack.api.complete_turn(session["id"], turn)
    idle = stack.api.session(session["id"])
    stack.api.publish(session["id"], codex_end("late", "Compiling\nFinished\n", 0))
    assert stack.api.shell_output(session["id"], message_id)["output"]["stdout"] == (
        "Compiling\nFinished\n")
    after = stack.api.session(session["id"])
    assert (after["state"], after["updated_at"]) == (idle["state"], idle["updated_at"])
    assert stack.api.list_messages(session["id"])["total"] == 1


def test_scenario_output_over_256_kib_is_bounded_newest_and_truncated(stack: Stack) -> None:
    session = stack.api.new_session(agent="codex")
    updates = load_fixture("codex-ts-terminal-large-output")
    message_id = stack.api.play(session["id"], updates)
    final = stack.api.shell_output(session["id"], message_id)
    stored = final["output"]["stdout"].encode("utf-8")
    assert len(stored) <= 262_144
    assert final["output"]["truncated"] is True
    sent = "".join(u["_meta"]["terminal_output_delta"]["data"] for u in updates[1:-1])
    assert sent.endswith(final["output"]["stdout"])
    summary = stack.api.shell_exec(session["id"], message_id)
    assert summary["output"]["truncated"] is True
    assert summary["output"]["stdout_bytes"] == len(stored)


def test_scenario_browser_payloads_carry_counts_but_no_bodies(stack: Stack) -> None:
    session = stack.api.new_session(agent="codex")
    body = "BODY-MUST-NOT-LEAK\n"
    stack.api.play(session["id"], [codex_start("nb", "cat notes"),
                                        codex_end("nb", body, 0)])
    listed = stack.api.request("GET", f"/api/v1/task-sessions/{session['id']}/messages").body
    boot = stack.api.request("GET", f"/api/v1/tasks/{session['task_id']}/boot-state").body
    feed = stack.api.watch(session["id"], "?since_revision=0")
    events = [next(feed) for _ in range(3)]
    feed.close()
    assert [event["type"] for event in events] == [
        "heartbeat", "session.message.added", "session.message.updated"]
    for payload in (listed, boot, json.dumps(events).encode()):
        assert b"BODY-MUST-NOT-LEAK" not in payload
        assert b'"stdout"' not in payload
        assert b'"stderr"' not in payload
        assert b'"stdout_bytes":' in payload.replace(b": ", b":")

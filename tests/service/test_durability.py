"""An acknowledged publish survives SIGKILL, and the fold resumes from the persisted state."""

from __future__ import annotations

import pytest

from support.acp import codex_delta, codex_end, codex_start
from support.stack import Stack

pytestmark = pytest.mark.slow


def test_sigkill_after_acknowledged_publish_loses_nothing(own_stack: Stack) -> None:
    session = own_stack.api.new_session()
    message = own_stack.api.publish(session["id"], codex_start("k1", "make"))["message"]
    for index in range(20):
        own_stack.api.publish(session["id"], codex_delta("k1", f"line {index}\n"),
                              sequence=index + 1)

    own_stack.kill_server()
    own_stack.start_server()

    expected = "".join(f"line {index}\n" for index in range(20))
    assert own_stack.api.shell_output(session["id"], message["id"])["output"]["stdout"] == expected


def test_fold_resumes_after_restart_without_losing_or_duplicating(own_stack: Stack) -> None:
    session = own_stack.api.new_session()
    message = own_stack.api.publish(session["id"], codex_start("k2", "build"))["message"]
    own_stack.api.publish(session["id"], codex_delta("k2", "first\n"))

    own_stack.kill_server()
    own_stack.start_server()

    own_stack.api.publish(session["id"], codex_delta("k2", "second\n"))
    running = own_stack.api.shell_output(session["id"], message["id"])
    assert running["output"]["stdout"] == "first\nsecond\n"
    own_stack.api.publish(session["id"], codex_end("k2", "first\nsecond\n", 3))
    final = own_stack.api.shell_output(session["id"], message["id"])
    assert final["output"] == {"exit_code": 3, "stdout": "first\nsecond\n", "stderr": "",
                               "truncated": False}
    assert final["status"] == "failed"


def test_retry_after_restart_with_same_sequence_changes_nothing(own_stack: Stack) -> None:
    session = own_stack.api.new_session()
    message = own_stack.api.publish(session["id"], codex_start("k3", "x"), sequence=1)["message"]
    own_stack.api.publish(session["id"], codex_delta("k3", "once\n"), sequence=2)
    own_stack.kill_server()
    own_stack.start_server()
    retried = own_stack.api.publish(session["id"], codex_delta("k3", "once\n"), sequence=2)
    assert retried["duplicate"] is True
    assert own_stack.api.shell_output(session["id"], message["id"])["output"]["stdout"] == "once\n"


def test_plain_final_text_restored_after_restart_still_yields_to_terminal_output(
        own_stack: Stack) -> None:
    session = own_stack.api.new_session(agent="claude")
    start = {"sessionUpdate": "tool_call", "toolCallId": "k4", "kind": "execute",
             "title": "ls", "status": "pending", "rawInput": {"command": "ls"}}
    message = own_stack.api.publish(session["id"], start)["message"]
    own_stack.api.publish(session["id"], {"sessionUpdate": "tool_call_update", "toolCallId": "k4",
                                          "status": "completed", "rawOutput": "model copy\n"})
    stored = own_stack.api.shell_output(session["id"], message["id"])
    assert stored["output"]["stdout"] == "model copy\n"

    own_stack.kill_server()
    own_stack.start_server()

    # Reordered delivery: the terminal text arrives after the plain result it outranks.
    own_stack.api.publish(session["id"], {
        "sessionUpdate": "tool_call_update", "toolCallId": "k4",
        "_meta": {"terminal_output": {"terminal_id": "k4", "data": "terminal text\n"}}})
    final = own_stack.api.shell_output(session["id"], message["id"])
    assert final["output"]["stdout"] == "terminal text\n"
    assert final["status"] == "complete"

"""Rules of the specification that the normalizer's own tests pin in-process, checked again
through Envoy's REST front door on a stored session: an omitted field keeps its accumulated
value, exit-code precedence and unparseable exit codes, the 256 KiB bound at its edge and on
stderr alone, completing a turn with pending calls, and a late update while a newer turn runs.
(The rules and their in-process tests are in docs/spec-summary.md's coverage table.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from support.acp import codex_delta, codex_end, codex_start
from support.stack import Stack

Update = dict[str, Any]

BOUND = 262_144
"""Each output stream keeps at most this many bytes of UTF-8 (docs/api.md, Limits)."""




def _call(call_id: str, command: str, status: str = "pending") -> Update:
    """A generic shell `tool_call` (kind `execute`, a string command), of no agent's dialect."""
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": command,
            "kind": "execute", "status": status, "rawInput": {"command": command}}


def _update(call_id: str, **fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def _terminal_exit(call_id: str, exit_code: Any) -> dict[str, Any]:
    return {"terminal_exit": {"terminal_id": call_id, "exit_code": exit_code, "signal": None}}


# --- An omitted field keeps its accumulated value -------------------------------------------


def test_a_final_stating_only_stdout_keeps_the_live_stderr(stack: Stack) -> None:
    """A `rawOutput` on an update that still says `in_progress` is live text; the final
    result replaces the field it states (stdout) and leaves the one it omits (stderr)."""
    session = stack.api.new_session(agent=None)
    message_id = stack.api.play(session["id"], [
        _call("om1", "make check"),
        _update("om1", status="in_progress",
                rawOutput={"stdout": "out1\n", "stderr": "err1\n"}),
    ])
    live = stack.api.shell_output(session["id"], message_id)
    assert (live["status"], live["output"]) == (
        "running", {"stdout": "out1\n", "stderr": "err1\n", "truncated": False})

    stack.api.publish(session["id"], _update("om1", status="completed",
                                             rawOutput={"stdout": "out-final\n"}))

    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"] == {"stdout": "out-final\n", "stderr": "err1\n", "truncated": False}
    assert stack.api.shell_exec(session["id"], message_id)["output"] == {
        "truncated": False, "has_output": True, "stdout_bytes": len("out-final\n"),
        "stderr_bytes": len("err1\n")}


@pytest.mark.parametrize(("live", "kept"), [
    pytest.param(_update("om2", status="in_progress",
                         rawOutput={"stdout": "out1\n", "stderr": "err1\n"}),
                 {"stdout": "out1\n", "stderr": "err1\n"}, id="live-raw-output"),
    pytest.param(_update("om2", _meta={"terminal_output_delta": {"data": "out1\n"}}),
                 {"stdout": "out1\n"}, id="live-delta"),
])
def test_a_final_stating_only_the_exit_code_keeps_the_live_output(
        stack: Stack, live: Update, kept: dict[str, str]) -> None:
    """TypeScript Codex's read commands end with `rawOutput: {exit_code}` alone: the text
    streamed before is the output, not replaced by nothing."""
    session = stack.api.new_session(agent=None)
    message_id = stack.api.play(session["id"], [
        _call("om2", "ls -1"), live,
        _update("om2", status="completed", rawOutput={"exit_code": 0}),
    ])
    final = stack.api.shell_output(session["id"], message_id)
    assert (final["status"], final["output"]) == (
        "complete", {"exit_code": 0, **kept, "truncated": False})
    assert stack.api.shell_exec(session["id"], message_id)["result"] == "success"


# --- Exit-code precedence, and exit codes that are not ones ---------------------------------


def test_terminal_exit_beats_a_later_native_exit_code(stack: Stack) -> None:
    """`_meta.terminal_exit` (rank 3) is never overridden by `rawOutput.exit_code` (rank 2),
    whichever arrives last."""
    session = stack.api.new_session(agent="codex")
    message_id = stack.api.play(session["id"], [
        codex_start("ex1", "make lint"), codex_delta("ex1", "lint: 1 problem\n"),
        _update("ex1", status="completed", _meta=_terminal_exit("ex1", 3)),
        _update("ex1", rawOutput={"stdout": "lint: 1 problem\n", "exit_code": 5}),
    ])
    final = stack.api.shell_output(session["id"], message_id)
    assert (final["status"], final["output"]["exit_code"]) == ("failed", 3)
    summary = stack.api.shell_exec(session["id"], message_id)
    assert (summary["output"]["exit_code"], summary["result"]) == (3, "failure")


def test_a_later_terminal_exit_beats_an_earlier_native_exit_code(stack: Stack) -> None:
    """A native exit 5 showed the command failed; the terminal's own exit 0, arriving later
    and ranking higher, replaces it: the command succeeded."""
    session = stack.api.new_session(agent="codex")
    message_id = stack.api.play(session["id"], [
        codex_start("ex2", "make test"),
        _update("ex2", status="completed", rawOutput={"stdout": "ok\n", "exit_code": 5}),
    ])
    assert stack.api.shell_exec(session["id"], message_id)["output"]["exit_code"] == 5

    stack.api.publish(session["id"], _update("ex2", _meta=_terminal_exit("ex2", 0)))

    final = stack.api.shell_output(session["id"], message_id)
    assert (final["status"], final["output"]["exit_code"]) == ("complete", 0)
    summary = stack.api.shell_exec(session["id"], message_id)
    assert (summary["output"]["exit_code"], summary["result"]) == (0, "success")


def _exit_in_terminal_exit(call_id: str, value: Any) -> Update:
    return _update(call_id, status="completed", _meta=_terminal_exit(call_id, value))


def _exit_in_raw_output(call_id: str, value: Any) -> Update:
    return _update(call_id, status="completed",
                   rawOutput={"stdout": "built\n", "exit_code": value})


@pytest.mark.parametrize("final", [_exit_in_terminal_exit, _exit_in_raw_output],
                         ids=["terminal_exit", "rawOutput"])
@pytest.mark.parametrize("value", ["abc", False, "0x10", None],
                         ids=["text", "false", "hex", "null"])
def test_an_unparseable_exit_code_stays_unknown_and_never_becomes_zero(
        stack: Stack, final: Callable[[str, Any], Update], value: Any) -> None:
    session = stack.api.new_session(agent="codex")
    message_id = stack.api.play(session["id"], [
        codex_start("ex3", "make"), codex_delta("ex3", "built\n"), final("ex3", value)])
    shown = stack.api.shell_output(session["id"], message_id)
    assert (shown["status"], shown["output"]) == (
        "complete", {"stdout": "built\n", "truncated": False})
    assert stack.api.shell_exec(session["id"], message_id) == {
        "command": "make", "work_dir": "/home/dev/proj", "result": "unknown",
        "output": {"truncated": False, "has_output": True, "stdout_bytes": len("built\n"),
                   "stderr_bytes": 0}}


# --- The 256 KiB bound -----------------------------------------------------------------------


@pytest.mark.parametrize(("extra", "truncated"), [(0, False), (1, True)],
                         ids=["exactly-the-bound", "one-byte-over"])
def test_output_of_exactly_the_bound_is_whole_and_not_truncated(
        stack: Stack, extra: int, truncated: bool) -> None:
    """262,144 bytes fit; one byte more is cut, the oldest byte going. (What is kept starts
    with a line break: a cut stream's leading run of token characters would be masked as the
    possible tail of a secret, docs/security.md.)"""
    session = stack.api.new_session(agent="codex")
    chunks = ["!" * extra + "\n" + "." * 65_534 + "\n"] + ["\n" + ":" * 65_534 + "\n"] * 3
    message_id = stack.api.play(session["id"], [
        codex_start("bd1", "cat big.log"),
        *(codex_delta("bd1", chunk) for chunk in chunks),
        _update("bd1", status="completed", _meta=_terminal_exit("bd1", 0)),
    ])
    shown = stack.api.shell_output(session["id"], message_id)
    assert shown["output"] == {"exit_code": 0, "stdout": "".join(chunks)[extra:],
                               "truncated": truncated}
    assert stack.api.shell_exec(session["id"], message_id)["output"] == {
        "exit_code": 0, "truncated": truncated, "has_output": True, "stdout_bytes": BOUND,
        "stderr_bytes": 0}


def test_a_small_final_after_truncated_live_output_is_not_truncated(stack: Stack) -> None:
    """`truncated` says our bound cut the text shown; a final result that replaced the cut
    live text was not cut."""
    session = stack.api.new_session(agent="codex")
    message_id = stack.api.play(session["id"], [
        codex_start("bd2", "pytest -q"),
        *(codex_delta("bd2", "." * 65_535 + "\n") for _ in range(5)),
    ])
    live = stack.api.shell_output(session["id"], message_id)["output"]
    assert (len(live["stdout"].encode()), live["truncated"]) == (BOUND, True)

    stack.api.publish(session["id"], _update("bd2", status="completed",
                                             rawOutput={"stdout": "3 passed\n", "exit_code": 0}))

    final = stack.api.shell_output(session["id"], message_id)
    assert final["output"] == {"exit_code": 0, "stdout": "3 passed\n", "truncated": False}
    assert stack.api.shell_exec(session["id"], message_id)["output"] == {
        "exit_code": 0, "truncated": False, "has_output": True,
        "stdout_bytes": len("3 passed\n"), "stderr_bytes": 0}


def test_stderr_alone_over_the_bound_keeps_its_newest_whole_characters(stack: Stack) -> None:
    """Sent 262,149 bytes of stderr: the newest 262,144 would begin inside a three-byte `€`,
    so the cut moves to the next character and 262,143 bytes are kept. stdout is unaffected
    but the output as a whole says `truncated`."""
    session = stack.api.new_session(agent=None)
    stderr = "€" * 87_382 + "ok\n"
    assert len(stderr.encode()) == BOUND + 5
    message_id = stack.api.play(session["id"], [
        _call("bd3", "./noisy.sh", status="in_progress"),
        _update("bd3", status="failed",
                rawOutput={"stdout": "building\n", "stderr": stderr, "exit_code": 1}),
    ])
    kept = "€" * 87_380 + "ok\n"
    assert len(kept.encode()) == BOUND - 1
    shown = stack.api.shell_output(session["id"], message_id)
    assert shown["output"] == {"exit_code": 1, "stdout": "building\n", "stderr": kept,
                               "truncated": True}
    assert stack.api.shell_exec(session["id"], message_id)["output"] == {
        "exit_code": 1, "truncated": True, "has_output": True,
        "stdout_bytes": len("building\n"), "stderr_bytes": BOUND - 1}


# --- Turns ------------------------------------------------------------------------------------


def _turn_with_pending_running_and_finished_calls(
        stack: Stack) -> tuple[str, str, dict[str, str], dict[str, Any]]:
    """A session whose running turn holds a pending call, a running one and a finished one;
    returns the session id, the turn id, each call's message id, and the finished call's
    shell output before the turn ends."""
    session = stack.api.new_session(agent="codex")
    turn = stack.api.start_turn(session["id"])
    ids = {
        "pending": stack.api.play(session["id"], [_call("tp1", "npm ci")]),
        "running": stack.api.play(session["id"], [
            codex_start("tr1", "npm test"), codex_delta("tr1", "test 1 ok\n")]),
        "finished": stack.api.play(session["id"], [
            codex_start("tf1", "ls"), codex_end("tf1", "a\n", 0)]),
    }
    assert stack.api.shell_output(session["id"], ids["pending"])["status"] == "pending"
    finished = stack.api.shell_output(session["id"], ids["finished"])
    return session["id"], turn, ids, finished


def test_completing_a_turn_cancels_its_pending_calls_as_well_as_running_ones(
        stack: Stack) -> None:
    session_id, turn, ids, _ = _turn_with_pending_running_and_finished_calls(stack)

    completed = stack.api.complete_turn(session_id, turn, "cancelled")

    assert sorted(completed["cancelled_message_ids"]) == sorted([ids["pending"], ids["running"]])
    pending = stack.api.shell_output(session_id, ids["pending"])
    assert (pending["status"], pending["output"]) == ("cancelled", {"truncated": False})
    running = stack.api.shell_output(session_id, ids["running"])
    assert (running["status"], running["output"]) == (
        "cancelled", {"stdout": "test 1 ok\n", "truncated": False})
    assert stack.api.shell_exec(session_id, ids["pending"])["result"] == "unknown"


def test_completing_a_turn_leaves_a_call_finished_before_as_it_was(stack: Stack) -> None:
    session_id, turn, ids, before = _turn_with_pending_running_and_finished_calls(stack)

    stack.api.complete_turn(session_id, turn, "cancelled")

    after = stack.api.shell_output(session_id, ids["finished"])
    assert after == before
    assert (after["status"], after["output"]) == (
        "complete", {"exit_code": 0, "stdout": "a\n", "stderr": "", "truncated": False})


def test_a_late_update_of_an_earlier_turns_call_keeps_its_turn_while_a_newer_one_runs(
        stack: Stack) -> None:
    """The call belongs to the turn it was made in: its terminal update, arriving while the
    next prompt's turn runs, neither moves it to that turn nor opens a third."""
    session = stack.api.new_session(agent="codex")
    first = stack.api.start_turn(session["id"])
    late_id = stack.api.play(session["id"], [
        codex_start("lt1", "cargo build"), codex_delta("lt1", "Compiling\n")])
    assert stack.api.complete_turn(session["id"], first)["cancelled_message_ids"] == [late_id]
    second = stack.api.start_turn(session["id"])
    now_id = stack.api.play(session["id"], [codex_start("lt2", "cargo test")])
    before = stack.api.session(session["id"])

    late = stack.api.publish(session["id"],
                             codex_end("lt1", "Compiling\nFinished\n", 0))["message"]

    assert (late["id"], late["turn_id"], late["metadata"]["status"]) == (
        late_id, first, "complete")
    after = stack.api.session(session["id"])
    # One event, the message's update: no turn started or completed (revisions have no gaps).
    assert (after["state"], after["current_turn_id"], after["revision"]) == (
        "running", second, before["revision"] + 1)
    listed = stack.api.list_messages(session["id"])
    assert [(m["id"], m["turn_id"]) for m in listed["messages"]] == [
        (late_id, first), (now_id, second)]
    assert [(t["id"], t["state"]) for t in listed["turns"]] == [
        (first, "complete"), (second, "running")]

"""The `result` a shell summary carries (ADR 0009), in every browser-facing payload.

Each command's updates are also folded by the normalizer here: the summary must carry exactly
the result the normalizer computes, whatever route a browser reads it from.
"""

from __future__ import annotations

from typing import Any

from shellexec import normalize

from support.acp import codex_delta, codex_end, codex_start
from support.stack import Stack

Update = dict[str, Any]


def _exit_without_status(call_id: str, exit_code: int) -> Update:
    """The process exited, but the agent has not reported a status yet."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "_meta": {"terminal_exit": {"terminal_id": call_id, "exit_code": exit_code,
                                        "signal": None}}}


def _completed_without_exit(call_id: str) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed"}


# command -> (its updates, the result while the turn runs, the result once it ended)
COMMANDS: dict[str, tuple[list[Update], str, str]] = {
    "make ok": ([codex_start("r_ok", "make ok"), codex_end("r_ok", "fine\n", 0)],
                "success", "success"),
    "make bad": ([codex_start("r_bad", "make bad"), codex_end("r_bad", "boom\n", 4)],
                 "failure", "failure"),
    "make quiet": ([codex_start("r_quiet", "make quiet"), _completed_without_exit("r_quiet")],
                   "unknown", "unknown"),
    # A known exit code does not end a command the agent still reports running; once the
    # turn cancels it, the nonzero exit code makes it a failure.
    "make exiting": ([codex_start("r_exit", "make exiting"), codex_delta("r_exit", "x\n"),
                      _exit_without_status("r_exit", 1)], "running", "failure"),
    "sleep 60": ([codex_start("r_sleep", "sleep 60")], "running", "unknown"),
}


def _results(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {message["content"]: message["metadata"]["normalized"]["shell_exec"]["result"]
            for message in messages}


def _normalized(cancelled: bool) -> dict[str, str]:
    """What the normalizer says of each command, before or after the turn ends."""
    results: dict[str, str] = {}
    for command, (updates, _, _) in COMMANDS.items():
        state = normalize.fold_all(updates, agent="codex")
        results[command] = (normalize.cancel(state) if cancelled else state).result
    return results


def _every_payload(stack: Stack, session: dict[str, Any]) -> list[dict[str, str]]:
    """The results of the list, the boot state and the feed's replay."""
    boot = stack.api.request("GET", f"/api/v1/tasks/{session['task_id']}/boot-state").json()
    return [_results(stack.api.list_messages(session["id"])["messages"]),
            _results(boot["initial_state"]["messages"]),
            _results(_replayed_messages(stack, session["id"]))]


def test_list_boot_state_and_feed_carry_the_normalizers_result(stack: Stack) -> None:
    session = stack.api.new_session()
    turn_id = stack.api.start_turn(session["id"])
    for updates, _, _ in COMMANDS.values():
        for update in updates:
            stack.api.publish(session["id"], update)
    running = {command: during for command, (_, during, _) in COMMANDS.items()}
    assert _normalized(cancelled=False) == running
    assert _every_payload(stack, session) == [running] * 3

    stack.api.complete_turn(session["id"], turn_id, stop_reason="cancelled")
    ended = {command: after for command, (_, _, after) in COMMANDS.items()}
    assert _normalized(cancelled=True) == ended
    assert _every_payload(stack, session) == [ended] * 3


def _replayed_messages(stack: Stack, session_id: str) -> list[dict[str, Any]]:
    """Each message as the feed's replay from revision 0 last shows it."""
    revision = int(stack.api.session(session_id)["revision"])
    latest: dict[str, dict[str, Any]] = {}
    events = stack.api.watch(session_id, "?since_revision=0")
    try:
        for event in events:
            if "message" in event:
                latest[event["message"]["id"]] = event["message"]
            if event["revision"] >= revision and event["type"] != "heartbeat":
                break
    finally:
        events.close()
    return list(latest.values())

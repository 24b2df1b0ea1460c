"""Every character an agent sends is stored and served back as sent, on both engines: NUL
(which PostgreSQL's `text` refuses) and U+FFFF (what the PostgreSQL store escapes NUL with)
included, in output, titles, commands, tool call ids and chat text."""

from __future__ import annotations

from shellexec.rules.limits import (
    MAX_AGENT_CHARS,
    MAX_STOP_REASON_CHARS,
    MAX_TOOL_CALL_ID_CHARS,
)

from support.acp import agent_text, codex_delta, codex_end, codex_start
from support.stack import Stack

AWKWARD = "nul\x00 escape\uffff0 both\uffff1\x00 pair\uffff\uffff end\x00"


def test_nul_and_the_escape_character_round_trip(stack: Stack) -> None:
    session_id = stack.api.new_session()["id"]
    call_id = "call\x00\uffff"
    stack.api.publish(session_id, codex_start(call_id, f"printf {AWKWARD}"))
    stack.api.publish(session_id, codex_delta(call_id, AWKWARD))
    stack.api.publish(session_id, codex_end(call_id, AWKWARD + AWKWARD, 0))
    stack.api.publish(session_id, agent_text(AWKWARD))

    tool, text = stack.api.messages(session_id)
    assert tool["metadata"]["title"] == f"printf {AWKWARD}"
    assert tool["content"] == f"printf {AWKWARD}"
    assert text["content"] == AWKWARD
    output = stack.api.shell_output(session_id, tool["id"])["output"]
    assert output["stdout"] == AWKWARD + AWKWARD
    assert tool["metadata"]["normalized"]["shell_exec"]["output"]["stdout_bytes"] == len(
        (AWKWARD + AWKWARD).encode())
    # A later update of the same call finds it by its id.
    stack.api.publish(session_id, codex_end(call_id, "replaced", 0))
    assert len(stack.api.messages(session_id)) == 2


def test_ids_and_names_of_awkward_characters_are_kept_at_their_full_length(
        stack: Stack) -> None:
    """Escaped, a NUL or U+FFFF takes two characters (PostgreSQL): a bounded id made only of
    them still fits its column."""
    agent = "\uffff\x00" * (MAX_AGENT_CHARS // 2)
    session = stack.api.new_session(agent=agent)
    assert session["agent"] == agent
    call_id = "\x00" * MAX_TOOL_CALL_ID_CHARS
    stack.api.publish(session["id"], codex_start(call_id, "ls"))
    stack.api.publish(session["id"], codex_end(call_id, "done\n", 0))
    turn_id = stack.api.start_turn(session["id"])
    stop_reason = "\x00" * MAX_STOP_REASON_CHARS
    completed = stack.api.complete_turn(session["id"], turn_id, stop_reason)
    assert completed["turn"]["stop_reason"] == stop_reason

    # One message: the call's end found its start by the id.
    (tool,) = stack.api.messages(session["id"])
    assert tool["metadata"]["status"] == "complete"
    assert stack.api.shell_output(session["id"], tool["id"])["output"]["stdout"] == "done\n"

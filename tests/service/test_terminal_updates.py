"""ACP v2 terminal updates through the REST front door: linked, held, validated (ADRs
0085, 0086)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from shellexec.rules.limits import (
    MAX_HELD_TERMINAL_UPDATES,
    MAX_TERMINAL_DATA_BYTES,
    MAX_TERMINAL_ID_CHARS,
    MAX_TOOL_CALL_ID_CHARS,
)

from support.stack import Stack

Update = dict[str, Any]


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def call(call_id: str, *terminals: str, **fields: Any) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "execute",
            "status": "in_progress", "title": "make",
            "content": [{"type": "terminal", "terminalId": t} for t in terminals], **fields}


def finish(call_id: str, **fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed",
            **fields}


def chunk(terminal_id: str, data: bytes | str, **fields: Any) -> Update:
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id,
            "data": b64(data), **fields}


def terminal(terminal_id: str, **fields: Any) -> Update:
    return {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields}


def output_of(stack: Stack, session_id: str, message_id: str) -> dict[str, Any]:
    found: dict[str, Any] = stack.api.shell_output(session_id, message_id)
    return found


def test_terminal_output_folds_into_the_call_that_names_it(stack: Stack) -> None:
    session = stack.api.new_session(agent="goose")["id"]
    message = stack.api.publish(session, call("c1", "t1"))["message"]
    euro = "€".encode()
    stack.api.publish(session, chunk("t1", b"1 " + euro[:2]))
    live = stack.api.publish(session, chunk("t1", euro[2:] + b"\n"))["message"]
    assert live["id"] == message["id"]
    assert live["metadata"]["normalized"]["shell_exec"]["output"]["stdout_bytes"] == 6
    stack.api.publish(session, terminal("t1", exitStatus={"exitCode": 2, "signal": None}))
    done = stack.api.publish(session, finish("c1", rawOutput={"stdout": "(summary)",
                                                              "exit_code": 0}))["message"]
    assert done["metadata"]["status"] == "failed"
    body = output_of(stack, session, message["id"])
    # The terminal's transcript and exit, not the agent's summary (no stderr: the terminal
    # shows one combined stream).
    assert body["output"] == {"exit_code": 2, "stdout": "1 €\n", "truncated": False}


def test_an_unsigned_exit_code_above_the_signed_range_is_a_failure(stack: Stack) -> None:
    # ACP's exitCode is unsigned: a Windows access violation ends with 0xC0000005.
    session = stack.api.new_session(agent="goose")["id"]
    message = stack.api.publish(session, call("c1", "t1"))["message"]
    stack.api.publish(session, chunk("t1", b"crash\r\n"))
    stack.api.publish(session, terminal("t1", exitStatus={"exitCode": 3221225477,
                                                           "signal": None}))
    ended = stack.api.publish(session, finish("c1"))["message"]
    shell = ended["metadata"]["normalized"]["shell_exec"]
    assert (shell["result"], shell["output"]["exit_code"]) == ("failure", -1073741819)
    assert output_of(stack, session, message["id"])["output"]["stdout"] == "crash\r\n"


def test_updates_before_the_tool_call_are_held_then_folded_in_order(stack: Stack) -> None:
    session = stack.api.new_session(agent="")["id"]
    early = [terminal("t2", command="ls -la", cwd="/w"), chunk("t2", "a\n"), chunk("t2", "b\n")]
    for update in early:
        assert "message" not in stack.api.publish(session, update)
    first = stack.api.publish(session, {"sessionUpdate": "tool_call", "toolCallId": "c2",
                                        "title": "list"})["message"]
    assert first["type"] == "tool_call"  # not named yet: still held
    named = stack.api.publish(session, finish("c2", content=[
        {"type": "terminal", "terminalId": "t2"}]))["message"]
    assert named["type"] == "tool_execute"
    shell = named["metadata"]["normalized"]["shell_exec"]
    assert (shell["command"], shell["work_dir"]) == ("ls -la", "/w")
    assert output_of(stack, session, named["id"])["output"]["stdout"] == "a\nb\n"
    stack.api.publish(session, chunk("t2", "c\n"))
    assert output_of(stack, session, named["id"])["output"]["stdout"] == "a\nb\nc\n"


def test_a_hosting_client_names_the_call_in_meta(stack: Stack) -> None:
    session = stack.api.new_session(agent="kimi")["id"]
    message = stack.api.publish(session, {"sessionUpdate": "tool_call", "toolCallId": "c3",
                                          "title": "Shell: ls", "status": "in_progress"})
    hint = {"_meta": {"shellexec_tool_call_id": "c3"}}
    stack.api.publish(session, terminal("t3", command="ls", **hint))
    stack.api.publish(session, chunk("t3", "out\n", **hint))
    body = output_of(stack, session, message["message"]["id"])
    assert body["output"]["stdout"] == "out\n"


def test_the_first_call_that_names_a_terminal_keeps_it(stack: Stack) -> None:
    session = stack.api.new_session()["id"]
    first = stack.api.publish(session, call("c4", "t4"))["message"]
    second = stack.api.publish(session, call("c5", "t4"))["message"]
    stack.api.publish(session, chunk("t4", "x"))
    assert output_of(stack, session, first["id"])["output"]["stdout"] == "x"
    assert second["type"] == "tool_execute"
    assert "stdout" not in output_of(stack, session, second["id"])["output"]


@pytest.mark.parametrize(("update", "field"), [
    ({"sessionUpdate": "terminal_output_chunk", "data": "eA=="}, "update.terminalId"),
    (chunk("", "x"), "update.terminalId"),
    (chunk("t" * 257, "x"), "update.terminalId"),
    ({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "e A=="},
     "update.data"),
    ({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "eA"},
     "update.data"),
    ({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": 7}, "update.data"),
    (chunk("t", b"\0" * (MAX_TERMINAL_DATA_BYTES + 1)), "update.data"),
    (terminal("t", output={"data": "%%"}), "update.output.data"),
    (terminal("t", output="eA=="), "update.output"),
    (terminal("t", command=3), "update.command"),
    (terminal("t", cwd=["/"]), "update.cwd"),
    (terminal("t", exitStatus={"exitCode": 1.5}), "update.exitStatus.exitCode"),
    (terminal("t", exitStatus={"exitCode": 2**32}), "update.exitStatus.exitCode"),
    (terminal("t", exitStatus={"exitCode": -(2**31) - 1}), "update.exitStatus.exitCode"),
    (terminal("t", exitStatus={"exitCode": True}), "update.exitStatus.exitCode"),
    (terminal("t", exitStatus={"signal": "S" * 33}), "update.exitStatus.signal"),
    (terminal("t", exitStatus=2), "update.exitStatus"),
    (terminal("t", _meta={"shellexec_tool_call_id": 5}), "update._meta.shellexec_tool_call_id"),
])
def test_a_malformed_terminal_update_is_400_naming_the_field(stack: Stack, update: Update,
                                                             field: str) -> None:
    session = stack.api.new_session()["id"]
    answer = stack.api.request("POST", f"/api/v1/task-sessions/{session}/updates",
                               {"update": update})
    assert answer.status == 400, answer.body
    assert answer.json()["message"].startswith(f"{field}:")
    assert stack.api.messages(session) == []


@pytest.mark.slow
def test_held_updates_are_bounded_per_session(stack: Stack) -> None:
    session = stack.api.new_session()["id"]
    for number in range(MAX_HELD_TERMINAL_UPDATES):
        stack.api.publish(session, chunk(f"t{number % 3}", "x"))
    answer = stack.api.request("POST", f"/api/v1/task-sessions/{session}/updates",
                               {"update": chunk("t0", "y")})
    assert answer.status == 400
    assert answer.json()["message"].startswith("update.terminalId:")
    # Naming a terminal releases its held updates, and the session can hold more again.
    message = stack.api.publish(session, call("c6", "t0"))["message"]
    held = len(range(0, MAX_HELD_TERMINAL_UPDATES, 3))
    assert output_of(stack, session, message["id"])["output"]["stdout"] == "x" * held
    stack.api.publish(session, chunk("t9", "z"))


GITHUB = "ghp_" + "R2d2C3p0L1ghtS4b3rXw1ngY0d4H4nS0L0Ch"


@pytest.mark.slow
def test_masking_at_rest_masks_terminal_data_held_or_split(
        stack_with: Callable[..., Stack]) -> None:
    at_rest = stack_with(SHELLEXEC_MASK_AT_REST="on", SHELLEXEC_MASK_SECRETS="off")
    session = at_rest.api.new_session()["id"]
    at_rest.api.publish(session, terminal("t7", command=f"GH_TOKEN={GITHUB} gh auth status",
                                          output={"data": b64(f"held {GITHUB}\n")}))
    message = at_rest.api.publish(session, call("c7", "t7"))["message"]
    at_rest.api.publish(session, chunk("t7", f"live {GITHUB[:20]}"))
    at_rest.api.publish(session, chunk("t7", f"{GITHUB[20:]} done\n"))

    stored = "".join(at_rest.chunk_texts())
    stored += "".join(str(row[0]) for row in at_rest.sql("SELECT command FROM message"))
    assert GITHUB[4:] not in stored
    assert GITHUB[20:] not in stored
    body = at_rest.api.shell_output(session, message["id"])["output"]["stdout"]
    assert len(body) == len(f"held {GITHUB}\nlive {GITHUB} done\n")
    assert body.startswith("held ghp_*")


@pytest.mark.slow
def test_masking_at_rest_masks_a_value_whose_character_a_chunk_cut_in_two(
        stack_with: Callable[..., Stack]) -> None:
    """`h\xc3` | `\xa9llo` (an `é` cut in two) inside a masked value: masking the byte left
    over raised UnicodeEncodeError, so the chunk was refused (500) and never stored."""
    at_rest = stack_with(SHELLEXEC_MASK_AT_REST="on")
    raw = "DB_PASSWORD=h\u00e9llo-world\nok\n".encode()
    cut = raw.index(b"\xc3") + 1
    session = at_rest.api.new_session()["id"]
    message = at_rest.api.publish(session, call("c9", "t9"))["message"]
    at_rest.api.publish(session, chunk("t9", raw[:cut]))
    at_rest.api.publish(session, chunk("t9", raw[cut:]))
    at_rest.api.publish(session, terminal("t9", exitStatus={"exitCode": 0, "signal": None}))

    stored = "".join(at_rest.chunk_texts())
    assert "llo-world" not in stored
    output = output_of(at_rest, session, message["id"])["output"]
    assert output == {"exit_code": 0, "stdout": "DB_PASSWORD=" + "*" * 12 + "\nok\n",
                      "truncated": False}


def test_deleting_a_session_deletes_its_terminal_links_and_held_updates(stack: Stack) -> None:
    session = stack.api.new_session()["id"]
    stack.api.publish(session, call("c8", "t8"))
    stack.api.publish(session, chunk("t9", "held"))
    stack.api.call("DELETE", f"/api/v1/task-sessions/{session}")
    for table in ("terminal_link", "held_terminal_update"):
        found = stack.sql(f"SELECT count(*) FROM {table} WHERE session_id = ?", session)
        assert found == [(0,)], table


def test_normalize_folds_the_terminal_updates_of_the_call(stack: Stack) -> None:
    updates = [chunk("t10", "early\n"), call("c10", "t10"), chunk("t10", "late\n"),
               chunk("other", "not this call's\n"),
               terminal("t10", exitStatus={"exitCode": 0}), finish("c10", content=[])]
    answer = stack.api.call("POST", "/api/v1/shell-exec:normalize", {"updates": updates})
    assert answer["output"] == {"exit_code": 0, "stdout": "early\nlate\n", "truncated": False}
    assert answer["status"] == "complete"


def test_a_hint_naming_a_call_not_yet_published_waits_for_it(stack: Stack) -> None:
    session = stack.api.new_session(agent="vibe")["id"]
    hint = {"_meta": {"shellexec_tool_call_id": "c11"}}
    assert "message" not in stack.api.publish(session, chunk("t11", "early\n", **hint))
    message = stack.api.publish(session, {"sessionUpdate": "tool_call", "toolCallId": "c11",
                                          "title": "bash: ls"})["message"]
    assert message["type"] == "tool_execute"
    stack.api.publish(session, chunk("t11", "late\n", **hint))
    assert output_of(stack, session, message["id"])["output"]["stdout"] == "early\nlate\n"


def test_a_terminal_id_and_a_hinted_call_of_awkward_characters_fit_at_full_length(
        stack: Stack) -> None:
    """Escaped on PostgreSQL, a NUL or U+FFFF takes two characters: the held update and the
    link still store such ids at their full length."""
    session = stack.api.new_session(agent="goose")["id"]
    terminal_id = "\x00\uffff" * (MAX_TERMINAL_ID_CHARS // 2)
    call_id = "\uffff" * MAX_TOOL_CALL_ID_CHARS
    hint = {"_meta": {"shellexec_tool_call_id": call_id}}
    assert "message" not in stack.api.publish(session, chunk(terminal_id, "early\n", **hint))
    message = stack.api.publish(session, call(call_id, terminal_id))["message"]
    stack.api.publish(session, chunk(terminal_id, "late\n"))
    assert output_of(stack, session, message["id"])["output"]["stdout"] == "early\nlate\n"

"""Which tool call a hosted terminal belongs to (ADR 0087)."""

from __future__ import annotations

from typing import Any

from shellexec.bridge.open_calls import OpenCalls


def call(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, **fields}


def test_content_naming_the_terminal_wins() -> None:
    calls = OpenCalls()
    calls.observe(call("a", kind="execute"))
    calls.observe(call("b", content=[{"type": "terminal", "terminalId": "t"}]))
    calls.observe(call("c", content=[{"type": "terminal", "terminalId": "t"}]))
    assert calls.naming("t") == "b"
    assert calls.naming("u") is None


def test_the_most_recent_open_shell_call_else_any_open_call() -> None:
    calls = OpenCalls()
    assert calls.fallback("make") is None
    calls.observe(call("read", kind="read"))
    assert calls.fallback("make") == "read"
    calls.observe(call("sh1", kind="execute"))
    calls.observe(call("sh2", kind="execute"))
    calls.observe(call("search", kind="search"))
    assert calls.fallback("make") == "sh2"
    calls.observe({"sessionUpdate": "tool_call_update", "toolCallId": "sh2",
                   "status": "completed"})
    assert calls.fallback("make") == "sh1"
    for finished in ("sh1", "search"):
        calls.observe({"sessionUpdate": "tool_call_update", "toolCallId": finished,
                       "status": "failed"})
    assert calls.fallback("make") == "read"


def test_a_call_running_the_terminal_s_command_wins_in_the_order_the_calls_came() -> None:
    """Goose announces its calls, then runs them, and names no terminal: each terminal went
    to the most recent call, the output and exit code of one command into another's
    record."""
    calls = OpenCalls()
    for call_id, command in (("a", "make build"), ("b", "echo done"), ("c", "make build")):
        calls.observe(call(call_id, kind="execute", rawInput={"command": command}))
    assert calls.fallback("make build") == "a"
    assert calls.fallback("echo done") == "b"
    assert calls.fallback("make build") == "c"
    # Every call running it has a terminal: the most recent one, then as before.
    assert calls.fallback("make build") == "c"
    assert calls.fallback("ls") == "c"
    # The command is compared as the record shows it: a shell wrapper around it is unwrapped.
    calls.observe(call("d", kind="execute", rawInput={"command": ["bash", "-lc", "pytest -q"]}))
    calls.observe(call("e", kind="execute", rawInput={"command": "ls"}))
    assert calls.fallback("/bin/bash -lc 'pytest -q'") == "d"


def test_a_terminal_named_by_another_call_frees_the_one_it_was_given() -> None:
    calls = OpenCalls()
    for call_id in ("a", "b"):
        calls.observe(call(call_id, kind="execute", rawInput={"command": "ls"}))
    assert calls.fallback("ls") == "a"
    calls.moved("a", "b")
    assert calls.fallback("ls") == "a"


def test_other_updates_are_ignored() -> None:
    calls = OpenCalls()
    ignored: list[object] = [None, [], {"sessionUpdate": "plan"}, call(""),
                             {"sessionUpdate": "tool_call", "toolCallId": 7}]
    for update in ignored:
        calls.observe(update)
    assert calls.fallback("make") is None

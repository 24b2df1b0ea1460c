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
    assert calls.fallback() is None
    calls.observe(call("read", kind="read"))
    assert calls.fallback() == "read"
    calls.observe(call("sh1", kind="execute"))
    calls.observe(call("sh2", kind="execute"))
    calls.observe(call("search", kind="search"))
    assert calls.fallback() == "sh2"
    calls.observe({"sessionUpdate": "tool_call_update", "toolCallId": "sh2",
                   "status": "completed"})
    assert calls.fallback() == "sh1"
    for finished in ("sh1", "search"):
        calls.observe({"sessionUpdate": "tool_call_update", "toolCallId": finished,
                       "status": "failed"})
    assert calls.fallback() == "read"


def test_other_updates_are_ignored() -> None:
    calls = OpenCalls()
    ignored: list[object] = [None, [], {"sessionUpdate": "plan"}, call(""),
                             {"sessionUpdate": "tool_call", "toolCallId": 7}]
    for update in ignored:
        calls.observe(update)
    assert calls.fallback() is None

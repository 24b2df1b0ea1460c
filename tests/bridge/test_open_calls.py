"""Which tool call a hosted terminal belongs to (ADR 0087)."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest

from shellexec.bridge import open_calls
from shellexec.bridge.open_calls import MAX_OPEN_CALLS, OpenCalls
from shellexec.rules.limits import MAX_TOOL_CALL_ID_CHARS


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


def update(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def test_the_command_and_shell_signal_are_read_in_the_agent_s_dialect() -> None:
    """Mistral Vibe's `rawInput` is JSON text, and Kimi sends its arguments as JSON text in
    `content` with no `kind`: no call had a command, so a terminal went to the most recent
    call, and a killed `sleep 30` was recorded as another call's success."""
    vibe = OpenCalls("vibe")
    for call_id, command in (("v1", "sleep 30"), ("v2", "printf 'two\\n'")):
        vibe.observe(call(call_id, kind="execute", title=f"bash: {command}", status="pending",
                          rawInput=json.dumps({"command": command, "timeout": 1}),
                          _meta={"tool_name": "bash"}))
    assert vibe.fallback("sleep 30") == "v1"
    assert vibe.fallback("printf 'two\\n'") == "v2"

    kimi = OpenCalls()  # Kimi's shape alone, without a hint
    kimi.observe(call("shell", title="Shell", status="in_progress", content=[text("")]))
    kimi.observe(update("shell", title="Shell: make", status="in_progress",
                        content=[text('{"command": "make"}')]))
    kimi.observe(call("read", title="ReadFile", status="in_progress", content=[text("")]))
    kimi.observe(update("read", title="ReadFile: README.md", status="in_progress",
                        content=[text('{"path": "README.md"}')]))
    assert kimi.fallback("make") == "shell"  # rule 2
    assert kimi.fallback("make -j2") == "shell"  # rule 3: the only shell call, not the read



def test_an_open_call_keeps_no_output_however_much_it_printed() -> None:
    """Each open call held its whole fold state, output included: a hostile agent opening
    150 calls with 300 KiB of output each, and never ending them, grew the bridge by 80 MiB."""
    calls = OpenCalls("claude")
    output = "x" * 300_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for index in range(50):
            calls.observe(call(f"c{index}", kind="execute", rawInput={"command": "make"},
                               content=[text(output)], rawOutput={"stderr": output}))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 1_000_000, grown  # the texts alone are 30 MB
    assert calls.fallback("make") == "c0"


def test_past_the_bound_the_first_reported_open_call_is_taken_for_ended() -> None:
    calls = OpenCalls()
    for index in range(MAX_OPEN_CALLS + 1):
        calls.observe(call(f"c{index}", kind="execute", rawInput={"command": f"run {index}"}))
    assert calls.fallback("run 0") == f"c{MAX_OPEN_CALLS}"  # rule 3: c0 is no longer open
    assert calls.fallback("run 1") == "c1"
    assert calls.known("c0")


def test_a_command_longer_than_the_record_s_bound_is_compared_as_the_record_shows_it() -> None:
    long_command = "echo " + "y" * 300_000
    calls = OpenCalls()
    calls.observe(call("long", kind="execute", rawInput={"command": long_command}))
    calls.observe(call("other", kind="execute", rawInput={"command": "ls"}))
    assert calls.fallback(long_command) == "long"


def test_ids_the_service_would_refuse_are_not_followed() -> None:
    """Each call id was remembered for good whatever its length: 40 calls with 8 MiB ids kept
    320 MiB in the bridge."""
    calls = OpenCalls()
    too_long = "c" * (MAX_TOOL_CALL_ID_CHARS + 1)
    calls.observe(call(too_long, kind="execute", rawInput={"command": "make"},
                       content=[{"type": "terminal", "terminalId": "t" * 300}]))
    assert not calls.known(too_long)
    assert calls.fallback("make") is None
    calls.observe(call("c1", kind="execute",
                       content=[{"type": "terminal", "terminalId": "t" * 300}]))
    assert calls.naming("t" * 300) is None


def test_a_hostile_kind_or_tool_name_is_not_kept_whole() -> None:
    calls = OpenCalls()
    huge = "x" * 1_000_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for index in range(20):
            calls.observe(call(f"c{index}", kind=huge + str(index),
                               _meta={"claudeCode": {"toolName": huge + str(index)}}))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 1_000_000, grown  # the texts alone are 40 MB


def test_the_ids_remembered_are_bounded_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(open_calls, "MAX_FOLLOWED_IDS", 3)
    calls = OpenCalls()
    for index in range(4):
        calls.observe(call(f"c{index}", status="completed",
                           content=[{"type": "terminal", "terminalId": f"t{index}"}]))
    assert [calls.known(f"c{index}") for index in range(4)] == [False, True, True, True]
    assert [calls.naming(f"t{index}") for index in range(4)] == [None, "c1", "c2", "c3"]

"""ACP updates of one tool call (`call_1`) as the tests of the specification's rules and
scenarios write them: its `tool_call`, its `tool_call_update`s and their text content."""

from __future__ import annotations

from typing import Any

Update = dict[str, Any]


def start(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": "call_1", **fields}


def update(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", **fields}


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}

"""The tool call a permission request announces, for agents that report it nowhere else.

Gemini CLI sends no `tool_call` for a command that needs approval: the call first appears in
`session/request_permission` (`toolCall`: an ACP `ToolCallUpdate` with status `pending`, the
title, the content and the kind), and the agent's own updates of it are `tool_call_update`s
only, none of which names the command or its kind. Codex, too, asks before it reports the
call. So when a permission request names a call the agent has not reported yet, the bridge
records the request's `toolCall` as that call's `tool_call`, marked
`_meta.shellexec_permission_request: true`; the fold reads such an update for what the call
is, never for output or an exit code (ADR 0131).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shellexec.vocabulary import ACP_TOOL_CALL, META_PERMISSION_REQUEST


def announced_call(params: object) -> dict[str, Any] | None:
    """The `tool_call` update to record for the params of a permission request, or None when
    they name no call (anything but an object with a non-empty string `toolCallId`)."""
    tool_call = params.get("toolCall") if isinstance(params, Mapping) else None
    if not isinstance(tool_call, Mapping):
        return None
    call_id = tool_call.get("toolCallId")
    if not isinstance(call_id, str) or not call_id:
        return None
    meta = tool_call.get("_meta")
    marked = {**(meta if isinstance(meta, Mapping) else {}), META_PERMISSION_REQUEST: True}
    return {**tool_call, "sessionUpdate": ACP_TOOL_CALL, "_meta": marked}

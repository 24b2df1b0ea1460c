"""The notifications the bridge serves.

The ACP SDK logs a traceback for every notification whose method it has no route for, so an
agent sending such notifications in a loop would fill the bridge's log. The bridge's reader
(`agent_stream.py`) drops them before the SDK sees them (ADR 0129). A notification has no id,
so nothing is owed to the agent; a request with an unknown method still reaches the SDK,
which answers it "method not found".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# The only notification ACP v1 sends a client. Extension notifications (a method starting with
# `_`) also pass: ACP asks clients to ignore the ones they do not know, and the SDK does so
# silently.
SERVED_NOTIFICATIONS: Final = frozenset({"session/update"})
# How much of an unknown method a warning quotes.
METHOD_CHARS: Final = 80
# The tally of a flood of them (`flood_log.FloodLog`).
UNSERVED_TALLY: Final = ("agent sent {count} notifications the bridge does not serve so far "
                         "(the latest of {latest}): ignored")


def unserved_method(message: Mapping[str, Any]) -> str | None:
    """The method of `message` when it is a notification the bridge does not serve."""
    method = message.get("method")
    if "id" in message or not isinstance(method, str):
        return None
    if method in SERVED_NOTIFICATIONS or method.startswith("_"):
        return None
    return method


def unserved_warning(method: str) -> tuple[str, str]:
    """The warning for one notification of `method` and how a tally names it: `method`
    quoted and cut to METHOD_CHARS, so a newline in it cannot forge a log line."""
    quoted = repr(method[:METHOD_CHARS])
    return (f"agent sent a notification of method {quoted}, which the bridge does not "
            "serve: ignored", f"method {quoted}")

"""The notifications the bridge serves, and a log of the others that a flood cannot fill.

The ACP SDK logs a traceback for every notification whose method it has no route for, so an
agent sending such notifications in a loop would fill the bridge's log. The bridge's reader
(`agent_stream.py`) drops them before the SDK sees them (ADR 0129). A notification has no id,
so nothing is owed to the agent; a request with an unknown method still reaches the SDK,
which answers it "method not found".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

log = logging.getLogger("shellexec.bridge")

# The only notification ACP v1 sends a client. Extension notifications (a method starting with
# `_`) also pass: ACP asks clients to ignore the ones they do not know, and the SDK does so
# silently.
SERVED_NOTIFICATIONS: Final = frozenset({"session/update"})
# How much of an unknown method a warning quotes.
METHOD_CHARS: Final = 80


def unserved_method(message: Mapping[str, Any]) -> str | None:
    """The method of `message` when it is a notification the bridge does not serve."""
    method = message.get("method")
    if "id" in message or not isinstance(method, str):
        return None
    if method in SERVED_NOTIFICATIONS or method.startswith("_"):
        return None
    return method


@dataclass(slots=True)
class UnservedLog:
    """Warns of each of the first `each` notifications it is told of, then only when their
    count reaches a power of ten: a flood of N costs about `each + log10(N)` lines."""

    each: int = 10
    count: int = 0

    def note(self, method: str) -> None:
        self.count += 1
        quoted = repr(method[:METHOD_CHARS])  # a newline in it must not forge a log line
        if self.count <= self.each:
            log.warning("agent sent a notification of method %s, which the bridge does not "
                        "serve: ignored%s", quoted,
                        "; more are only counted" if self.count == self.each else "")
        elif _power_of_ten(self.count):
            log.warning("agent sent %d notifications the bridge does not serve so far (the "
                        "latest of method %s): ignored", self.count, quoted)


def _power_of_ten(number: int) -> bool:
    digits = str(number)
    return digits[0] == "1" and digits.count("0") == len(digits) - 1

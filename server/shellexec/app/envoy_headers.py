"""The one form every header the front door's configuration adds or replaces takes (Envoy's
HeaderValueOption), for requests and responses alike."""

from __future__ import annotations

from typing import Any


def replaced_header(name: str, value: str) -> dict[str, Any]:
    """The header `name: value`, replacing any of that name the message already has: every
    header the configuration sets is one value of its own, never an addition to the caller's
    or the server's."""
    return {"header": {"key": name, "value": value},
            "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"}

"""Whether an update the agent sent can be published at all, decided before it is queued.

An update the service would refuse for its nesting, or one the client cannot encode as a
google.protobuf.Value (a number beyond a double, a lone surrogate, nesting past protobuf's
own recursion limit), is skipped with a warning, like an update the service refuses: it must
neither stop the forwarding nor fail the run (ADR 0123).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format

from shellexec.bridge.nesting import nests_deeper_than
from shellexec.client._values import to_value
from shellexec.rules.limits import MAX_UPDATE_DEPTH

# How much of the encoder's complaint a warning quotes.
_REASON_CHARS = 200


def unpublishable(update: Mapping[str, Any]) -> str | None:
    """Why `update` cannot be published, or None when it can."""
    if nests_deeper_than(update, MAX_UPDATE_DEPTH):
        return (f"it nests objects and arrays more than {MAX_UPDATE_DEPTH} deep, the "
                "service's limit")
    try:
        to_value(update)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as error:
        return f"it cannot be encoded as JSON for the service ({error})"[:_REASON_CHARS]
    return None

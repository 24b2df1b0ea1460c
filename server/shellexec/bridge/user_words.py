"""The user's words in the record are the prompt the bridge sent, never the agent's text.

The bridge records the prompt itself, as a `user_message_chunk` published before the prompt
is sent, and the service appends each `user_message_chunk` to the user's latest message. An
agent sends `user_message_chunk` only to replay a conversation's history during
`session/load` (ACP), which the bridge never asks for. So one the agent sends is dropped: a
hostile agent appended "I approve" to the user's recorded prompt. Each is counted as refused
and warned of, the first few one by one and then by a tally (`flood_log`, ADR 0122).
"""

from __future__ import annotations

from collections.abc import Mapping

from shellexec.bridge.flood_log import FloodLog
from shellexec.vocabulary import ACP_USER_MESSAGE_CHUNK

_WARNING = ("agent sent a user_message_chunk (the user's words, which an agent sends only "
            "to replay a loaded session, and the bridge loads none): not recorded")
_TALLY = "agent sent {count} user_message_chunk updates so far: not recorded"


class UserWords:
    """Tells the agent's `user_message_chunk` updates apart, warning of them."""

    def __init__(self) -> None:
        self._forged = FloodLog(_TALLY)

    def forged(self, update: object) -> bool:
        """Whether `update`, which the agent sent, speaks as the user."""
        if not isinstance(update, Mapping) or (
                update.get("sessionUpdate") != ACP_USER_MESSAGE_CHUNK):
            return False
        self._forged.note(_WARNING, ACP_USER_MESSAGE_CHUNK)
        return True

"""The one ACP session a bridge run opens, and telling other sessions' messages from its own.

An agent may name another session in an update or a request (a bug, or a second session it
opened itself). ACP clients keep sessions apart by their id: the bridge records only its own
session's updates, and answers only its own session's requests.
"""

from __future__ import annotations


class OwnSession:
    """The ACP session this run opened: learnt from the answer to the bridge's own
    `session/new` request (matched by its JSON-RPC id) as the agent's stream brings it
    (`agent._update_observer`), so the updates right behind it are known to be the
    session's. Another answer holding a `sessionId` does not count: an agent could otherwise
    name a session of its choosing and have its own session's updates dropped."""

    def __init__(self) -> None:
        self.id: str | None = None

    def foreign(self, session_id: object) -> bool:
        """Whether `session_id` names another session than this run's (none is named before
        `session/new` answers: no session is open yet, and nothing is refused)."""
        return self.id is not None and session_id is not None and session_id != self.id

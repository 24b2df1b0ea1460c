"""The one ACP session a bridge run opens, and telling other sessions' messages from its own.

An agent may name another session in an update or a request (a bug, or a second session it
opened itself), or none at all. ACP clients keep sessions apart by their id: the bridge records
only its own session's updates, and answers only its own session's requests. A message that
names no session (no `sessionId`, or null) is none of the run's: ACP requires the id.
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
        """Whether `session_id` is not this run's session: no session id (None), or another
        session's once `session/new` answered (before, any other id is taken: the answer may
        not have come by yet)."""
        if session_id is None:
            return True
        return self.id is not None and session_id != self.id

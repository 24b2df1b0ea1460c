"""Everything units of work remember between runs, forgotten together on a rollback.

A unit of work may read what an earlier unit wrote from memory instead of the database: fold
states (`StateCache`), session facts (`KnownSessions`) and the feed revisions handed out
(`Statements`). When a commit group rolls back (see `store.database`), what its units wrote
is gone, so each of these may be ahead of the database. `UnitCaches` holds them all and is
the one rollback listener that clears them; the use cases take it instead of each cache.
"""

from __future__ import annotations

from shellexec.service.known_sessions import KnownSessions
from shellexec.service.state_cache import StateCache
from shellexec.store import Database


class UnitCaches:
    """The caches of the units of work on one database, registered with it once."""

    def __init__(self, database: Database, state_bytes: int, known_sessions: int) -> None:
        self.states = StateCache(max_bytes=state_bytes)
        self.sessions = KnownSessions(known_sessions)
        self._statements = database.statements
        database.on_rollback(self.forget)

    def forget(self) -> None:
        """Clears every cache: after a rollback, any of them may hold unsaved writes."""
        self.states.clear()
        self.sessions.clear()
        self._statements.forget()

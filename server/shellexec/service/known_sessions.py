"""The facts of sessions units of work have looked up, kept between units.

A session's task and agent never change, so a session once found
needs no second query; only a rollback can make an entry wrong (the session may never have
been committed), so `UnitCaches` clears it then.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_KNOWN_SESSIONS = 4096


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What a publish needs to know about its session."""

    id: str
    task_id: str
    agent: str


class KnownSessions:
    """A bounded map of session id to its facts; used on the event loop's thread only."""

    def __init__(self, capacity: int = MAX_KNOWN_SESSIONS) -> None:
        self._capacity = capacity
        self._facts: dict[str, SessionFacts] = {}

    def get(self, session_id: str) -> SessionFacts | None:
        return self._facts.get(session_id)

    def put(self, facts: SessionFacts) -> None:
        if self._capacity == 0:  # SHELLEXEC_KNOWN_SESSIONS=0: every publish reads the row
            return
        if len(self._facts) >= self._capacity:
            self._facts.pop(next(iter(self._facts)))
        self._facts[facts.id] = facts

    def clear(self) -> None:
        self._facts.clear()

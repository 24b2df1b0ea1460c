"""Recording a feed event inside the unit of work that changed a message or a turn."""

from __future__ import annotations

from shellexec.feed import FeedEvent
from shellexec.projection import Masking, TurnView, project_message
from shellexec.store import Statements
from shellexec.store.models import Message, Turn


def record(statements: Statements, session_id: str, event_type: str, row: Message,
           masking: Masking) -> FeedEvent:
    """Gives the session its next revision, logs the event durably, and returns it for the
    watchers (to be announced once the unit of work has committed)."""
    revision = statements.next_revision(session_id)
    statements.insert_event(session_id, revision, event_type, int(row.position),
                            int(row.updated_at))
    return FeedEvent(event_type, revision, project_message(row, masking))


def record_turn(statements: Statements, session_id: str, event_type: str, row: Turn,
                now: int) -> FeedEvent:
    """The same for a turn that started or completed (ADR 0090)."""
    revision = statements.next_revision(session_id)
    statements.insert_event(session_id, revision, event_type, 0, now, turn_id=row.id)
    return FeedEvent(event_type, revision, turn=TurnView.of(row))

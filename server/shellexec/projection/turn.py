"""A persisted turn as every payload carries it (start, end, stop reason)."""

from __future__ import annotations

from dataclasses import dataclass

from shellexec.store.models import Turn


@dataclass(frozen=True, slots=True)
class TurnView:
    id: str
    session_id: str
    state: str
    stop_reason: str
    started_at: int
    completed_at: int | None

    @classmethod
    def of(cls, row: Turn) -> TurnView:
        completed = None if row.completed_at is None else int(row.completed_at)
        return cls(id=row.id, session_id=str(row.session_id), state=row.state,
                   stop_reason=row.stop_reason, started_at=int(row.started_at),
                   completed_at=completed)

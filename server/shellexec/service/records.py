"""Plain values the use cases return; independent of peewee and of the proto types."""

from __future__ import annotations

from dataclasses import dataclass

from shellexec.normalize import ShellOutput
from shellexec.projection import MessageView, TurnView
from shellexec.store.models import Session


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    task_id: str
    agent: str
    state: str
    created_at: int
    updated_at: int
    revision: int
    current_turn_id: str
    command_count: int = 0
    failure_count: int = 0

    @classmethod
    def of(cls, row: Session, revision: int, current_turn_id: str) -> SessionRecord:
        return cls(id=row.id, task_id=str(row.task_id), agent=row.agent, state=row.state,
                   created_at=int(row.created_at), updated_at=int(row.updated_at),
                   revision=revision, current_turn_id=current_turn_id,
                   command_count=int(row.command_count or 0),
                   failure_count=int(row.failure_count or 0))


# A turn as the use cases return it (the feed carries the same value).
TurnRecord = TurnView


@dataclass(frozen=True, slots=True)
class PublishResult:
    """The message a publish created or changed (None for ignored update types)."""

    message: MessageView | None
    duplicate: bool


@dataclass(frozen=True, slots=True)
class CompletedTurn:
    turn: TurnRecord
    cancelled_message_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MessagePage:
    messages: tuple[MessageView, ...]
    total: int
    has_more: bool
    cursor: str
    turns: tuple[TurnView, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionPage:
    sessions: tuple[SessionRecord, ...]
    total: int
    has_more: bool
    cursor: str


@dataclass(frozen=True, slots=True)
class ShellOutputRecord:
    message_id: str
    status: str
    updated_at: int
    output: ShellOutput


@dataclass(frozen=True, slots=True)
class BootStateRecord:
    session: SessionRecord
    messages: tuple[MessageView, ...]
    task_state: str
    turns: tuple[TurnView, ...] = ()

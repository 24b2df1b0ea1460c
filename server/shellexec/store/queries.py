"""The reads the service runs. Each runs inside a unit of work or a read opened by
`Database`; units of work write through `Statements` only (ADR 0020).

Every list and feed query names its columns and never selects `OutputChunk`, so its cost does
not depend on how much output the messages hold.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, cast

from peewee import JOIN, Case, Expression, fn

from shellexec.store import packing
from shellexec.store.models import (
    Event,
    Message,
    OutputChunk,
    Session,
    SessionRequest,
    Task,
    Turn,
    TurnRequest,
)
from shellexec.vocabulary import TASK_IDLE, TURN_RUNNING, UNFINISHED_STATUSES

# The columns a browser-facing payload needs: everything but the fold state.
SUMMARY_COLUMNS = (
    Message.position, Message.id, Message.session, Message.task_id, Message.turn_id,
    Message.author_type, Message.type, Message.content, Message.tool_call_id, Message.status,
    Message.title, Message.is_shell, Message.command, Message.work_dir, Message.exit_code,
    Message.truncated, Message.has_output, Message.stdout_bytes, Message.stderr_bytes,
    Message.state_version, Message.created_at, Message.updated_at,
)


def get_session(session_id: str) -> Session | None:
    # Not `get_or_none`: for a missing row it raises and catches DoesNotExist, whose message
    # renders the SQL again, 80 us that told a missing session from another task's one.
    return cast(Session | None, Session.select().where(Session.id == session_id).first())


def latest_session_of_task(task_id: str) -> Session | None:
    return cast(Session | None, Session.select().where(Session.task == task_id)
                .order_by(Session.created_at.desc(), Session.id.desc()).first())


def task_state(task_id: str) -> str:
    """The task's state, `idle` for a task that does not exist."""
    value = Task.select(Task.state).where(Task.id == task_id).scalar()
    return TASK_IDLE if value is None else str(value)


def session_of_request(task_id: str, request_id: str, since: int) -> Session | None:
    """The session a CreateSession of this task with this request id created at `since` or
    later."""
    return cast(Session | None, Session.select().join(
        SessionRequest, on=(SessionRequest.session == Session.id))
        .where((SessionRequest.task_id == task_id) & (SessionRequest.request_id == request_id)
               & (SessionRequest.created_at >= since))
        .first())


def turn_of_request(session_id: str, request_id: str, since: int) -> Turn | None:
    """The turn a StartTurn on this session with this request id started at `since` or
    later."""
    return cast(Turn | None, Turn.select().join(
        TurnRequest, on=(TurnRequest.turn == Turn.id))
        .where((TurnRequest.session == session_id) & (TurnRequest.request_id == request_id)
               & (TurnRequest.created_at >= since))
        .first())


def running_turn(session_id: str) -> Turn | None:
    return cast(Turn | None, Turn.select().where(
        (Turn.session == session_id) & (Turn.state == TURN_RUNNING)).first())


def current_turn_id(session_id: str) -> str:
    """The id of the session's running turn, empty when none runs."""
    value = Turn.select(Turn.id).where(
        (Turn.session == session_id) & (Turn.state == TURN_RUNNING)).scalar()
    return "" if value is None else str(value)


def get_turn(session_id: str, turn_id: str) -> Turn | None:
    return cast(Turn | None, Turn.select().where(
        (Turn.session == session_id) & (Turn.id == turn_id)).first())


def get_message_row(position: int) -> Message:
    """The full row (with its fold state) of a message that exists."""
    return Message.get(Message.position == position)


def latest_message(session_id: str) -> Message | None:
    return cast(Message | None, Message.select(*SUMMARY_COLUMNS)
                .where(Message.session == session_id).order_by(Message.position.desc()).first())


def find_shell_message(session_id: str, message_id: str) -> Message | None:
    """The summary row of a shell message of this session, else None."""
    return cast(Message | None, Message.select(*SUMMARY_COLUMNS).where(
        (Message.session == session_id) & (Message.id == message_id)
        & (Message.is_shell == True)).first())  # noqa: E712 (a peewee expression)


def get_message_by_position(position: int) -> Message | None:
    return cast(Message | None,
                Message.select(*SUMMARY_COLUMNS).where(Message.position == position).first())


def read_stream(position: int, stream: str) -> str | None:
    """The stream's stored text, or None when the stream was never reported."""
    chunks = [packing.unpack(str(chunk.data), chunk.packed, chunk.text_bytes)
              for chunk in (OutputChunk.select(OutputChunk.text_bytes, OutputChunk.packed,
                                               OutputChunk.data)
                            .where((OutputChunk.message == position)
                                   & (OutputChunk.stream == stream))
                            .order_by(OutputChunk.id))]
    return "".join(chunks) if chunks else None


@dataclass(frozen=True, slots=True)
class EventHead:
    """A logged event without what it carries: the message's position (0 for a turn event)
    or the turn's id (None for a message event)."""

    revision: int
    type: str
    message_position: int
    turn_id: str | None


def event_heads_after(session_id: str, revision: int, limit: int) -> list[EventHead]:
    """Up to `limit` events with a greater revision, oldest first, without their rows."""
    rows: Any = (Event.select(Event.revision, Event.type, Event.message, Event.turn_id)
                 .join(Session, JOIN.INNER, on=(Event.session_number == Session.number))
                 .where((Session.id == session_id) & (Event.revision > revision))
                 .order_by(Event.revision).limit(limit).tuples())
    return [EventHead(int(number), str(event_type), int(position), turn_id)
            for number, event_type, position, turn_id in rows]


def text_bytes_at(positions: Collection[int]) -> dict[int, int]:
    """The bytes of the texts of the messages at these positions, by position (their
    `text_bytes`)."""
    if not positions:
        return {}
    rows: Any = (Message.select(Message.position, Message.text_bytes)
                 .where(Message.position.in_(sorted(positions))).tuples())
    return {int(position): int(size) for position, size in rows}


def messages_at(positions: Collection[int]) -> dict[int, Message]:
    """The summary rows of the messages at these positions, by position."""
    if not positions:
        return {}
    rows = Message.select(*SUMMARY_COLUMNS).where(Message.position.in_(sorted(positions)))
    return {int(row.position): row for row in rows}


def turns_with_ids(turn_ids: Collection[str]) -> dict[str, Turn]:
    """The turns with these ids, by id, as they are now (what turn events carry)."""
    if not turn_ids:
        return {}
    rows = (Turn.select(Turn.id, Turn.session, Turn.state, Turn.stop_reason, Turn.started_at,
                        Turn.completed_at).where(Turn.id.in_(sorted(turn_ids))))
    return {str(row.id): row for row in rows}


def turns_of(session_id: str, turn_ids: set[str]) -> list[Turn]:
    """The session's turns with these ids and its running turn, oldest first."""
    condition = Turn.state == TURN_RUNNING
    if turn_ids:
        condition = condition | Turn.id.in_(sorted(turn_ids))
    return list(Turn.select().where((Turn.session == session_id) & condition)
                .order_by(Turn.started_at, Turn.id))


def count_messages(session_id: str) -> int:
    return int(Message.select(fn.COUNT(Message.position))
               .where(Message.session == session_id).scalar())


def _page(columns: Sequence[Any], session_id: str, limit: int, *, descending: bool,
          before: int | None, after: int | None) -> Any:
    query = Message.select(*columns).where(Message.session == session_id)
    if before is not None:
        query = query.where(Message.position < before)
    if after is not None:
        query = query.where(Message.position > after)
    order = Message.position.desc() if descending else Message.position.asc()
    return query.order_by(order).limit(limit)


def page_weights(session_id: str, limit: int, *, descending: bool,
                 before: int | None = None, after: int | None = None) -> list[int]:
    """The bytes of the texts (`text_bytes`) of each of the messages `page_of_messages`
    would return, in its order."""
    rows: Any = _page([Message.text_bytes], session_id, limit, descending=descending,
                      before=before, after=after).tuples()
    return [int(size) for (size,) in rows]


def page_of_messages(session_id: str, limit: int, *, descending: bool,
                     before: int | None = None, after: int | None = None) -> list[Message]:
    """Up to `limit` summary rows ordered by position, bounded by the cursor positions."""
    return list(_page(SUMMARY_COLUMNS, session_id, limit, descending=descending,
                      before=before, after=after))


def session_number(session_id: str) -> int | None:
    value = Session.select(Session.number).where(Session.id == session_id).scalar()
    return None if value is None else int(value)


def sessions_by_creation(limit: int, *, descending: bool, before: int | None = None,
                         after: int | None = None,
                         task_prefixes: Sequence[str] | None = None) -> list[Session]:
    """Up to `limit` sessions in creation order (their numbers), bounded by cursor numbers;
    with `task_prefixes`, only those whose task id starts with one of them (compared as
    text, exactly: no pattern syntax reaches SQL)."""
    query = Session.select()
    if task_prefixes is not None:
        query = query.where(_starts_with_any(Session.task, task_prefixes))
    if before is not None:
        query = query.where(Session.number < before)
    if after is not None:
        query = query.where(Session.number > after)
    order = Session.number.desc() if descending else Session.number.asc()
    return list(query.order_by(order).limit(limit))


def _starts_with_any(column: Any, prefixes: Sequence[str]) -> Expression:
    """`column` starts with one of `prefixes`: one `SUBSTR(column, 1, n) IN (...)` per prefix
    length, joined pairwise. A chain of one comparison per prefix nests as deep as there are
    prefixes, which SQLite's parser (about 90) and peewee's recursion (about 1,000) refuse;
    this nests at most log2 of the number of lengths (task ids are at most 128 long)."""
    by_length: dict[int, list[str]] = {}
    for prefix in prefixes:
        by_length.setdefault(len(prefix), []).append(prefix)
    conditions = [fn.SUBSTR(column, 1, length).in_(texts)
                  for length, texts in sorted(by_length.items())]
    while len(conditions) > 1:
        odd = [conditions.pop()] if len(conditions) % 2 else []
        conditions = [conditions[index] | conditions[index + 1]
                      for index in range(0, len(conditions), 2)] + odd
    return conditions[0]


def session_count() -> int:
    """How many sessions there are."""
    return int(Session.select().count())


def sessions_per_task(task_prefixes: Sequence[str] | None = None) -> list[tuple[str, int]]:
    """(task id, number of sessions) of every task, or with `task_prefixes` of every task
    whose id starts with one of them (as in `sessions_by_creation`)."""
    query = Session.select(Session.task, fn.COUNT(Session.id))
    if task_prefixes is not None:
        query = query.where(_starts_with_any(Session.task, task_prefixes))
    rows: Any = query.group_by(Session.task).tuples()
    return [(str(task_id), int(count)) for task_id, count in rows]


def message_position(session_id: str, message_id: str) -> int | None:
    value = (Message.select(Message.position)
             .where((Message.session == session_id) & (Message.id == message_id)).scalar())
    return None if value is None else int(value)


def unfinished_tool_messages(session_id: str) -> list[Message]:
    """Tool-call messages of the session that are not terminal yet."""
    return list(Message.select().where(
        (Message.session == session_id) & Message.tool_call_id.is_null(False)
        & Message.status.in_(UNFINISHED_STATUSES)).order_by(Message.position))


def session_ids_of_task(task_id: str) -> list[str]:
    """The ids of the task's sessions, oldest first."""
    return [str(session.id) for session in Session.select(Session.id)
            .where(Session.task == task_id).order_by(Session.created_at, Session.id)]


def sessions_idle_since(cutoff: int, limit: int) -> list[tuple[str, str]]:
    """(session id, task id) of up to `limit` sessions last active before `cutoff`, least
    recently active first."""
    return [(str(session.id), str(session.task_id)) for session in
            Session.select(Session.id, Session.task).where(Session.active_at < cutoff)
            .order_by(Session.active_at).limit(limit)]


def idle_among(session_ids: Collection[str], cutoff: int) -> set[str]:
    """Those of these sessions last active before `cutoff`: read again once they are locked,
    since another writer may have made one active after it was picked."""
    return {str(session.id) for session in
            Session.select(Session.id).where(Session.id.in_(sorted(session_ids))
                                             & (Session.active_at < cutoff))}


def compaction_point(session_id: str) -> tuple[int, int] | None:
    """(the session's compacted revision, its latest revision); None for a session that does
    not exist (any more)."""
    row = (Session.select(Session.compacted_revision, Session.revision)
           .where(Session.id == session_id).first())
    return None if row is None else (int(row.compacted_revision), int(row.revision))


# A session to compact: its id and compaction point, and the revision up to which its events
# may now be pruned. Not its number: the write that prunes reads that from the id, since a
# deleted session's number may be given again before it runs.
Compactable = tuple[str, int, int]


def compactable_sessions(cutoff: int, after_id: str, limit: int) -> list[Compactable]:
    """Up to `limit` sessions (by id, after `after_id`) with feed events from before `cutoff`
    still stored.

    Events carry no time of their own (a timestamp on every publish's row would cost bytes on
    every publish): an event of a message that has not changed since before `cutoff` is
    older than it, and revisions grow with time, so every event up to the highest such
    revision is older too (ADR 0062). A session quiet since before `cutoff` (every event
    moves its `active_at`) has only older events, its turns' events too."""
    old_message = (Message.select(fn.MAX(Event.revision))
                   .join(Event, on=(Event.message == Message.position))
                   .where((Message.session == Session.id) & (Message.updated_at < cutoff)
                          & (Event.session_number == Session.number)
                          & (Event.revision > Session.compacted_revision)))
    prunable = Case(None, [(Session.active_at < cutoff, Session.revision)], old_message)
    rows = (Session.select(Session.id, Session.compacted_revision,
                           prunable.alias("prunable"))
            .where((Session.id > after_id) & (Session.created_at < cutoff)
                   & (Session.revision > Session.compacted_revision))
            .order_by(Session.id).limit(limit))
    found = [cast(Any, row) for row in rows]  # `prunable` is set on the row at run time
    return [(str(row.id), int(row.compacted_revision), int(row.prunable or 0))
            for row in found]


"""Use cases that change sessions and turns: create, start turn, complete turn.

CreateSession and StartTurn take an optional client-chosen `request_id`: a retry with the same
id returns what the first call made and writes nothing new, so an answer lost on the way back
costs no second session or turn. Ids are remembered for `REQUEST_ID_WINDOW` (ADR 0007); a
CreateSession id is one of its task's, a StartTurn id one of its session's (ADR 0118).
"""

from __future__ import annotations

from shellexec import normalize
from shellexec.feed import FeedEvent, FeedHub
from shellexec.projection import Masking
from shellexec.rules.limits import REQUEST_ID_WINDOW_SECONDS
from shellexec.service import events, tool_calls, units
from shellexec.service.access import UNRESTRICTED, Caller
from shellexec.service.deps import Clock, IdFactory
from shellexec.service.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    quoted,
)
from shellexec.service.records import CompletedTurn, SessionPage, SessionRecord, TurnRecord
from shellexec.service.unit_caches import UnitCaches
from shellexec.store import Database, queries
from shellexec.store.models import Session
from shellexec.vocabulary import (
    EVENT_MESSAGE_UPDATED,
    EVENT_TURN_COMPLETED,
    EVENT_TURN_STARTED,
    REASON_REQUEST_ID_REUSED,
    REASON_TASK_NOT_COVERED,
    REASON_TURN_ALREADY_RUNNING,
    RESOURCE_SESSION,
    RESOURCE_TURN,
    SESSION_IDLE,
    SESSION_RUNNING,
    TURN_COMPLETE,
)

# Sessions read per query while a session page is filled with those the caller may see.
SESSION_SCAN_BATCH = 200

# How long a request id is remembered, in microseconds (the unit of the clock).
REQUEST_ID_WINDOW = REQUEST_ID_WINDOW_SECONDS * 1_000_000


def require_session(session_id: str, caller: Caller = UNRESTRICTED) -> Session:
    """The session, if it exists and the caller may see its task: a session of another task
    answers exactly as a missing one (ADR 0050)."""
    session = queries.get_session(session_id)
    if session is None or not caller.sees(str(session.task_id)):
        raise NotFoundError("session", session_id, RESOURCE_SESSION)
    return session


def session_record(session_id: str, caller: Caller = UNRESTRICTED) -> SessionRecord:
    """The session with its latest feed revision (inside a unit of work)."""
    return _record(require_session(session_id, caller))


def _record(session: Session) -> SessionRecord:
    return SessionRecord.of(session, int(session.revision), queries.current_turn_id(session.id))


def _cursor_number(field: str, session_id: str, caller: Caller) -> int | None:
    """The creation number of a cursor session; one the caller may not see is unknown."""
    if not session_id:
        return None
    session = queries.get_session(session_id)
    if session is None or not caller.sees(str(session.task_id)):
        raise NotFoundError(f"session ({field})", session_id, RESOURCE_SESSION)
    return int(session.number)


def page_of_sessions(size: int, before: str, after: str, descending: bool,
                     caller: Caller) -> SessionPage:
    """At most `size` of the sessions `caller` may see, in creation order from a cursor.

    Task patterns are globs, matched here as everywhere else (`Caller.sees`): the scan reads
    batches in order and keeps the visible rows until the page is full. The store narrows
    each batch to task ids starting with a pattern's literal prefix (`repo-` of `repo-*`), so
    for a token that sees few of many sessions the database skips the others and few rows
    reach this loop."""
    bounds = {"before": _cursor_number("before", before, caller),
              "after": _cursor_number("after", after, caller)}
    batch_size = max(size + 1, SESSION_SCAN_BATCH)
    prefixes = caller.task_prefixes()
    visible: list[Session] = []
    while len(visible) <= size:
        batch = queries.sessions_by_creation(batch_size, descending=descending,
                                             task_prefixes=prefixes, **bounds)
        visible += [row for row in batch if caller.sees(str(row.task_id))]
        if len(batch) < batch_size:
            break
        bounds["before" if descending else "after"] = int(batch[-1].number)
    page = tuple(_record(row) for row in visible[:size])
    return SessionPage(page, _visible_total(caller, prefixes), len(visible) > size,
                       page[-1].id if page else "")


def _visible_total(caller: Caller, prefixes: tuple[str, ...] | None) -> int:
    """How many sessions `caller` sees. Counted by the database for a caller who sees every
    task; else per task, of the tasks its patterns' prefixes narrow to. Grouping every
    session by task and matching each task here cost every caller's list 0.2-0.5 s once one
    token had made 40,000 tasks (an attacker's probe)."""
    if not caller.task_patterns:
        return queries.session_count()
    return sum(count for task_id, count in queries.sessions_per_task(prefixes)
               if caller.sees(task_id))


def _same_session_request(earlier: Session, agent: str) -> SessionRecord:
    """The session an earlier call of the same task with this request id created, as it is
    now; the id used again for another agent is a client error, not a new request. (Ids are
    scoped by task, ADR 0118: the caller may see this task, so naming its session reveals
    nothing.)"""
    if earlier.agent != agent:
        raise InvalidArgumentError(
            "request_id", f"was already used to create session {quoted(str(earlier.id))} for "
                          f"task {quoted(str(earlier.task_id))} and agent "
                          f"{quoted(earlier.agent)}; choose a new one",
            REASON_REQUEST_ID_REUSED)
    return _record(earlier)


class Sessions:
    """Creates sessions, starts and completes turns."""

    def __init__(self, database: Database, feed: FeedHub, caches: UnitCaches, clock: Clock,
                 new_id: IdFactory, *, masking: Masking) -> None:
        self._database = database
        self._feed = feed
        self._states = caches.states
        self._clock = clock
        self._new_id = new_id
        self._masking = masking

    async def create(self, task_id: str, agent: str, request_id: str = "", *,
                     caller: Caller = UNRESTRICTED) -> SessionRecord:
        if not caller.sees(task_id):
            # The caller named the task itself: refusing reveals nothing it did not know.
            raise PermissionDeniedError(
                f"this token may not create sessions of task {quoted(task_id)}",
                REASON_TASK_NOT_COVERED)

        def work() -> SessionRecord:
            now = self._clock()
            if request_id:
                earlier = queries.session_of_request(task_id, request_id,
                                                     now - REQUEST_ID_WINDOW)
                if earlier is not None:
                    return _same_session_request(earlier, agent)
            # Every check is done: from here on the unit writes (see `units`).
            statements = self._database.statements
            statements.forget_requests_before(now - REQUEST_ID_WINDOW)
            session = statements.insert_session(self._new_id("ses"), task_id, agent, now)
            if request_id:
                statements.remember_session_request(task_id, request_id, session.id, now)
            return SessionRecord.of(session, revision=0, current_turn_id="")

        return await units.write(self._database, work)

    async def get(self, session_id: str, *, caller: Caller = UNRESTRICTED) -> SessionRecord:
        return await self._database.read(lambda: session_record(session_id, caller))

    async def list_sessions(self, size: int, before: str, after: str, descending: bool, *,
                   caller: Caller = UNRESTRICTED) -> SessionPage:
        return await self._database.read(
            lambda: page_of_sessions(size, before, after, descending, caller))

    async def start_turn(self, session_id: str, request_id: str = "", *,
                         caller: Caller = UNRESTRICTED) -> TurnRecord:
        def work() -> tuple[TurnRecord, FeedEvent | None]:
            session = require_session(session_id, caller)
            now = self._clock()
            if request_id:
                earlier = queries.turn_of_request(session_id, request_id,
                                                  now - REQUEST_ID_WINDOW)
                if earlier is not None:
                    return TurnRecord.of(earlier), None
            if queries.running_turn(session_id) is not None:
                raise FailedPreconditionError(
                    f"session {quoted(session_id)} already has a running turn; complete it first",
                    REASON_TURN_ALREADY_RUNNING)
            # Every check is done: from here on the unit writes (see `units`).
            statements = self._database.statements
            statements.forget_requests_before(now - REQUEST_ID_WINDOW)
            turn = statements.insert_turn(self._new_id("turn"), session_id, now)
            if request_id:
                statements.remember_turn_request(session_id, request_id, turn.id, now)
            statements.set_session_state(session, SESSION_RUNNING, now)
            started = events.record_turn(statements, session_id, EVENT_TURN_STARTED, turn, now)
            return TurnRecord.of(turn), started

        def committed(stored: tuple[TurnRecord, FeedEvent | None] | None) -> None:
            if stored is not None and stored[1] is not None:  # announced if the call went
                self._feed.broadcast(session_id, stored[1])

        turn, _ = await units.write(self._database, work, session_id, committed=committed)
        return turn

    async def complete_turn(self, session_id: str, turn_id: str, stop_reason: str, *,
                            caller: Caller = UNRESTRICTED) -> CompletedTurn:
        def work() -> tuple[CompletedTurn, list[FeedEvent]]:
            session = require_session(session_id, caller)
            turn = queries.get_turn(session_id, turn_id)
            if turn is None:
                raise NotFoundError("turn", turn_id, RESOURCE_TURN)
            if turn.state == TURN_COMPLETE:
                return CompletedTurn(TurnRecord.of(turn), ()), []
            now = self._clock()
            recorded = self._cancel_unfinished(session_id, now)
            statements = self._database.statements
            statements.complete_turn(turn, stop_reason, now)
            statements.set_session_state(session, SESSION_IDLE, now)
            cancelled = tuple(e.message.id for e in recorded if e.message is not None)
            recorded.append(events.record_turn(statements, session_id, EVENT_TURN_COMPLETED,
                                               turn, now))
            return CompletedTurn(TurnRecord.of(turn), cancelled), recorded

        def committed(stored: tuple[CompletedTurn, list[FeedEvent]] | None) -> None:
            for event in () if stored is None else stored[1]:  # announced if the call went
                self._feed.broadcast(session_id, event)

        completed, _ = await units.write(self._database, work, session_id, committed=committed)
        return completed

    def _cancel_unfinished(self, session_id: str, now: int) -> list[FeedEvent]:
        """Marks every still-running tool call cancelled, keeping its transcript."""
        cancelled: list[FeedEvent] = []
        statements = self._database.statements
        for row in queries.unfinished_tool_messages(session_id):
            before = tool_calls.load(row, self._states)
            tool_calls.save(statements, row, before, normalize.cancel(before), now,
                                self._states)
            cancelled.append(events.record(statements, session_id, EVENT_MESSAGE_UPDATED, row,
                                           self._masking))
        return cancelled

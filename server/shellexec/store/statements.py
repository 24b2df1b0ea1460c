"""Every write of a unit of work, and the publish path's hot reads, compiled once from peewee
queries.

peewee builds the SQL text anew from the query tree on every execution; for the small
statements of a publish that costs several times what SQLite takes to run them (measured:
about 60 % of a publish's time). `Statements` builds each query once with named markers in
place of its values, keeps the SQL text and the positions of the markers, and afterwards only
fills in the values. The queries are still written with the models, so the schema lives in
one place; nothing here is hand-written SQL.

With other writers on the same database (PostgreSQL, several replicas), a unit's group first
locks the rows of the sessions its units change (`lock_sessions`, `SELECT ... FOR UPDATE`):
what is remembered of a session is then refreshed from its locked row, and nothing another
replica commits can come between reading and writing it (ADR 0070).

On PostgreSQL a transaction sends the statements through a pipeline (`pipelined`, ADR 0138):
a read waits for its result, a row count is read after a sync, and the checked message updates
are checked by `verify` before COMMIT.

Units of work write through `Statements` only, never through the models' own methods
(`create`, `save`, `Model.update().execute()`), so a transaction has one write path (ADR
0020); reads that are not hot stay in `queries`.
"""

from __future__ import annotations

import contextlib
import functools
import operator
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, cast

from peewee import Database as PeeweeDatabase
from peewee import Expression, Model, PostgresqlDatabase, Query, Select, Value, fn

from shellexec.store import packing
from shellexec.store.errors import StaleWriteError
from shellexec.store.models import (
    MESSAGE_TEXTS,
    SESSION_COUNTER_ROW,
    Event,
    HeldTerminalUpdate,
    Message,
    OutputChunk,
    PublishReceipt,
    Session,
    SessionCounter,
    SessionRequest,
    Task,
    TerminalLink,
    Turn,
    TurnRequest,
    stored_bytes,
    utf8_bytes,
)
from shellexec.vocabulary import (
    SESSION_IDLE,
    SESSION_RUNNING,
    TASK_IDLE,
    TASK_RUNNING,
    TURN_COMPLETE,
    TURN_RUNNING,
    SessionState,
)

_MARK = "\x00shellexec-param:"
# The most session numbers remembered before the memory starts over.
MAX_REMEMBERED_SESSIONS = 4096


class Pipeline(Protocol):
    """What `Statements` needs of a driver's pipeline (psycopg's `Pipeline`)."""

    def sync(self) -> None:
        """Sends what is queued and waits for every result."""


class StoredReceipt(NamedTuple):
    """A stored publish receipt: the message position its update affected (None when it
    changed no message) and its update's digest (None for receipts from before migration step 4)."""

    position: int | None
    digest: bytes | None


def param(name: str) -> Value:
    """A marker for a value given at execution time."""
    return Value(_MARK + name, converter=False)


class _Compiled:
    def __init__(self, query: Query) -> None:
        self.sql, params = query.sql()
        self._params = list(params)
        self._slots = [(index, value[len(_MARK):]) for index, value in enumerate(params)
                       if isinstance(value, str) and value.startswith(_MARK)]

    def params(self, values: Mapping[str, Any]) -> list[Any]:
        filled = list(self._params)
        for index, name in self._slots:
            filled[index] = values[name]
        return filled


class Statements:
    """Compiled statements for one bound database (used by units of work only)."""

    def __init__(self, db: PeeweeDatabase, *, single_writer: bool = True) -> None:
        self._db = db
        # False when other processes write the same database: then nothing remembered from
        # an earlier transaction is trusted before the session's row is locked again.
        self.single_writer = single_writer
        self._postgres = isinstance(db, PostgresqlDatabase)
        self._compiled: dict[object, _Compiled] = {}
        # The sessions whose rows the current transaction holds locked, and the latest feed
        # revision it logged of each session (other writers only: the other replicas are
        # told of them, `store.feed_notices`).
        self._locked: set[str] = set()
        self.announced: dict[str, int] = {}
        # The sessions the current transaction deleted (other writers only: the other
        # replicas end their watchers' streams).
        self.deleted: set[str] = set()
        # The latest revision this writer committed of each session, and the locked sessions
        # still at it: nothing another replica wrote since (every change of a session's
        # messages logs an event), so what this writer remembers of them holds.
        self._committed: dict[str, int] = {}
        self._unchanged: set[str] = set()
        # The latest feed revision of each session this writer has given out. The session
        # row is the truth; this saves reading it back on every publish.
        self._revisions: dict[str, int] = {}
        # Session ids and their numbers (the key of events and receipts); never change.
        self._numbers: dict[str, int] = {}
        # PostgreSQL: the pipeline the transaction sends its statements through (`pipelined`),
        # and the checked message updates sent through it, with their rows' positions.
        self._pipeline: Pipeline | None = None
        self._unverified: list[tuple[Any, int]] = []

    @contextlib.contextmanager
    def pipelined(self, pipeline: Pipeline) -> Iterator[None]:
        """Within: statements go out through `pipeline` without waiting for their results
        (PostgreSQL, ADR 0138). A result read waits for what was sent before it; checked
        message updates are checked by `verify`, which the transaction calls before COMMIT."""
        self._pipeline, self._unverified = pipeline, []
        try:
            yield
        finally:
            self._pipeline, self._unverified = None, []

    def verify(self) -> None:
        """Waits for every statement sent, then raises `StaleWriteError` if a checked message
        update found its row at another version than the one read (nothing may commit then)."""
        self._synced()
        unverified, self._unverified = self._unverified, []
        for cursor, position in unverified:
            if cursor.rowcount != 1:
                raise StaleWriteError(position)

    def _synced(self) -> None:
        """Waits for every statement sent, if they were pipelined: their row counts are known
        once it returns."""
        if self._pipeline is not None:
            self._pipeline.sync()

    def _affected(self, *cursors: Any) -> int:
        """How many rows the statements of `cursors` changed."""
        self._synced()
        return sum(int(cursor.rowcount) for cursor in cursors)

    def forget(self) -> None:
        """Drops what is remembered from the database (after a rollback it may be ahead)."""
        self._revisions.clear()
        self._numbers.clear()
        self._committed.clear()
        self._unchanged.clear()

    def begin(self) -> None:
        """Called as each write transaction begins: with other writers, what an earlier
        transaction remembered of revisions may be stale, and it holds no lock any more."""
        if not self.single_writer:
            self._locked.clear()
            self._unchanged.clear()
            self._revisions.clear()
            self.announced.clear()
            self.deleted.clear()

    def committed(self) -> None:
        """Called once the transaction committed: its revisions are this writer's own."""
        if len(self._committed) + len(self.announced) > MAX_REMEMBERED_SESSIONS:
            self._committed.clear()
        self._committed.update(self.announced)

    def lock_sessions(self, session_ids: Collection[str]) -> None:
        """With other writers: locks the rows of these sessions until the transaction ends,
        in id order (so two groups never wait on each other in a cycle), and refreshes what is
        remembered of them from the rows. A session not found is not locked (`holds`).
        Nothing to do for the only writer of the database."""
        if self.single_writer or not session_ids:
            return
        rows: Any
        if len(session_ids) == 1:  # the usual group: compiled once
            rows = self._run("lock_session", lambda: (
                Session.select(Session.id, Session.number, Session.revision)
                .where(Session.id == param("session")).for_update()),
                session=next(iter(session_ids))).fetchall()
        else:
            rows = (Session.select(Session.id, Session.number, Session.revision)
                    .where(Session.id.in_(sorted(session_ids))).order_by(Session.id)
                    .for_update().tuples())
        for session_id, number, revision in rows:
            self._locked.add(session_id)
            if self._committed.get(session_id) == revision:
                self._unchanged.add(session_id)
            self._numbers[session_id] = int(number)
            self._revisions[session_id] = int(revision)

    def lock_free_sessions(self, session_ids: Collection[str]) -> set[str]:
        """With other writers: locks, until the transaction ends, the rows of those of these
        sessions no other transaction holds (SKIP LOCKED), and returns them; the others are
        left alone without waiting. For housekeeping, which can leave a busy session to its
        next sweep: a unit that waited for rows while holding others' could close a cycle
        with another replica's group (PostgreSQL then aborted one after a second). The only
        writer of the database gets them all."""
        if self.single_writer or not session_ids:
            return set(session_ids)
        rows: Any = (Session.select(Session.id).where(Session.id.in_(sorted(session_ids)))
                     .order_by(Session.id).for_update(skip_locked=True).tuples())
        return {str(session_id) for session_id, in rows}

    def notify(self, channel: str, payload: str) -> None:
        """PostgreSQL only: a notice to the listeners of `channel`, delivered if and when
        the transaction commits (`store.feed_notices`)."""
        self._run("notify", lambda: Select(columns=[
            fn.pg_notify(param("channel"), param("payload"))]).bind(self._db),
            channel=channel, payload=payload)

    def trusts_memory(self, session_id: str) -> bool:
        """Whether what this writer remembers of the session's messages (fold states) is
        still true: always for the only writer; with other writers, when the locked row shows
        no revision but this writer's own since (`lock_sessions`)."""
        return self.single_writer or session_id in self._unchanged

    def holds(self, session_id: str) -> bool:
        """Whether the session exists and the transaction may change it: always for the only
        writer; with other writers, when `lock_sessions` found and locked its row (a session
        another replica deleted is gone, whatever this one remembers of it)."""
        return self.single_writer or session_id in self._locked

    def _number(self, session_id: str) -> int:
        """The session's number (0, matching nothing, for a session that does not exist)."""
        number = self._numbers.get(session_id)
        if number is None:
            row = self._run("session_number", lambda: Session.select(Session.number).where(
                Session.id == param("session")), session=session_id).fetchone()
            if row is None:
                return 0
            if len(self._numbers) >= MAX_REMEMBERED_SESSIONS:
                self._numbers.clear()
            number = self._numbers[session_id] = int(row[0])
        return number

    def _run(self, key: object, build: Callable[[], Query], /, **values: Any) -> Any:
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = _Compiled(build())
        # Straight to this thread's DB-API connection (inside the unit's transaction): peewee's
        # execute_sql adds a cursor wrapper and a log call per statement.
        connection = self._db.connection()  # type: ignore[no-untyped-call]  # peewee is untyped
        return connection.execute(compiled.sql, compiled.params(values))

    def _insert(self, model: type[Model], columns: Mapping[str, Any]) -> Any:
        """Inserts one row with these column values (one compiled form per column set)."""
        names = tuple(columns)
        return self._run(("insert", model, names), lambda: model.insert(
            {getattr(model, name): param(name) for name in names}),
            **{name: _db_value(model, name, columns[name]) for name in names})

    def ensure_task(self, task_id: str, now: int) -> None:
        """Makes the task exist, its row locked until the transaction ends. An update on
        conflict, not an ignore: with other writers it waits for one deleting the row (the
        task's last session went) and then inserts it again, where ignoring saw the row still
        there, and the task went, taking the new session with it (ADR 0062, since).
        `insert_session` calls it, after taking the session counter's lock."""
        self._run("ensure_task", lambda: Task.insert(
            id=param("task"), state=TASK_IDLE, created_at=param("now"), updated_at=param("now"),
        ).on_conflict(conflict_target=[Task.id], update={Task.updated_at: Task.updated_at}),
            task=_db_value(Task, "id", task_id), now=now)

    def lock_task(self, task_id: str) -> None:
        """With other writers: locks the task's row until the transaction ends, so what its
        sessions are (running, or there at all) is read after every other writer's change of
        them has committed. A unit locks its sessions before their task, and a creation the
        session counter before its task (`insert_session`), so two creations never wait on
        each other in a cycle, however many tasks a group creates sessions in."""
        if self.single_writer:
            return
        self._run("lock_task", lambda: Task.select(Task.id).where(
            Task.id == param("task")).for_update(), task=_db_value(Task, "id", task_id))

    def insert_session(self, session_id: str, task_id: str, agent: str, now: int) -> Session:
        """Creates the session, and its task when it has none yet."""
        number = self._next_session_number()  # the counter's lock first, then the task's
        self.ensure_task(task_id, now)
        columns = {"id": session_id, "task": task_id, "agent": agent, "state": SESSION_IDLE,
                   "number": number, "revision": 0, "compacted_revision": 0,
                   "created_at": now, "updated_at": now, "active_at": now,
                   "command_count": 0, "failure_count": 0}
        self._insert(Session, columns)
        return Session(**columns)

    def _next_session_number(self) -> int:
        """One more than the highest session number ever given, which it becomes (ADR 0118).

        On PostgreSQL the UPDATE locks the counter's row until the transaction ends, so
        creations on several replicas take turns and each reads the number it wrote (SQLite
        has one writer, whose BEGIN IMMEDIATE does the same). A creation rolled back gives
        its number back unused: numbers may skip, never repeat."""
        self._run("raise_session_counter", lambda: SessionCounter.update(
            highest_number=SessionCounter.highest_number + 1).where(
            SessionCounter.id == SESSION_COUNTER_ROW))
        return int(self._run("session_counter", lambda: SessionCounter.select(
            SessionCounter.highest_number).where(
            SessionCounter.id == SESSION_COUNTER_ROW)).fetchone()[0])

    def count_commands(self, session_id: str, commands: int, failures: int) -> None:
        """Adds to the session's command and failure counts (ADR 0091)."""
        self._run("count_commands", lambda: Session.update(
            command_count=Session.command_count + param("commands"),
            failure_count=Session.failure_count + param("failures"),
        ).where(Session.id == param("session")),
            commands=commands, failures=failures, session=session_id)

    def set_session_state(self, session: Session, state: SessionState, now: int) -> None:
        """Sets the session's state, and its task's: running while any of its sessions runs."""
        self._run("session_state", lambda: Session.update(
            state=param("state"), updated_at=param("now"), active_at=param("now")).where(
            Session.id == param("session")),
            state=state, now=now, session=session.id)
        self.lock_task(str(session.task_id))
        self._refresh_task_state(str(session.task_id), now)
        session.state = state
        session.updated_at = now

    def _refresh_task_state(self, task_id: str, now: int) -> None:
        """The task's state from its sessions' (its row locked by the caller)."""
        running = self._run("task_running", lambda: Session.select(Session.id).where(
            (Session.task == param("task")) & (Session.state == SESSION_RUNNING)).limit(1),
            task=_db_value(Task, "id", task_id)).fetchone() is not None
        self._run("task_state", lambda: Task.update(
            state=param("state"), updated_at=param("now")).where(Task.id == param("task")),
            state=TASK_RUNNING if running else TASK_IDLE, now=now,
            task=_db_value(Task, "id", task_id))

    def _delete_by(self, model: type[Model], column: str, value: Any) -> Any:
        """Deletes the model's rows whose `column` holds `value`; returns the cursor."""
        field = getattr(model, column)
        return self._run(("delete_by", model, column), lambda: model.delete().where(
            field == param("value")), value=value)

    def delete_session(self, session_id: str, task_id: str, now: int) -> dict[str, int]:
        """Deletes a session and every row stored for it, children first (the foreign keys'
        cascades would do it too, but one write path says what goes). A task left without
        sessions goes with it; otherwise its state follows its remaining sessions. Returns
        how many rows went, by table."""
        number = self._number(session_id)
        positions = Message.select(Message.position).where(Message.session == param("session"))
        deleting = {OutputChunk._meta.table_name: self._run(
            "delete_chunks", lambda: OutputChunk.delete().where(
                OutputChunk.message.in_(positions)), session=session_id)}
        for keyed_by_number in (PublishReceipt, Event):
            deleting[keyed_by_number._meta.table_name] = self._delete_by(
                keyed_by_number, "session_number", number)
        for keyed_by_session in (HeldTerminalUpdate, TerminalLink, Message, TurnRequest,
                                 SessionRequest, Turn):
            deleting[keyed_by_session._meta.table_name] = self._delete_by(
                keyed_by_session, "session", session_id)
        deleting[Session._meta.table_name] = self._run(
            "delete_session", lambda: Session.delete().where(
                Session.id == param("session")), session=session_id)
        self._synced()
        deleted = {table: int(cursor.rowcount) for table, cursor in deleting.items()}
        self._numbers.pop(session_id, None)
        self._revisions.pop(session_id, None)
        if not self.single_writer:
            self.deleted.add(session_id)
        task = _db_value(Task, "id", task_id)
        self.lock_task(task_id)  # a session being created in the task commits first
        remaining = self._run("task_has_sessions", lambda: Session.select(Session.id).where(
            Session.task == param("task")).limit(1), task=task).fetchone()
        if remaining is None:
            deleted[Task._meta.table_name] = self._affected(self._run(
                "delete_task", lambda: Task.delete().where(Task.id == param("task")),
                task=task))
        else:
            self._refresh_task_state(task_id, now)
        return deleted

    def forget_requests_before(self, cutoff: int) -> None:
        """Deletes the request ids remembered before `cutoff` (an index range; usually
        empty)."""
        self._run("forget_session_requests", lambda: SessionRequest.delete().where(
            SessionRequest.created_at < param("cutoff")), cutoff=cutoff)
        self._run("forget_turn_requests", lambda: TurnRequest.delete().where(
            TurnRequest.created_at < param("cutoff")), cutoff=cutoff)

    def remember_session_request(self, task_id: str, request_id: str, session_id: str,
                                 now: int) -> None:
        self._insert(SessionRequest, {"task_id": task_id, "request_id": request_id,
                                      "session": session_id, "created_at": now})

    def remember_turn_request(self, session_id: str, request_id: str, turn_id: str,
                              now: int) -> None:
        self._insert(TurnRequest, {"session": session_id, "request_id": request_id,
                                   "turn": turn_id, "created_at": now})

    def insert_turn(self, turn_id: str, session_id: str, now: int) -> Turn:
        columns = {"id": turn_id, "session": session_id, "state": TURN_RUNNING,
                   "stop_reason": "", "started_at": now, "completed_at": None}
        self._insert(Turn, columns)
        return Turn(**columns)

    def complete_turn(self, turn: Turn, stop_reason: str, now: int) -> None:
        self._run("complete_turn", lambda: Turn.update(
            state=TURN_COMPLETE, stop_reason=param("stop_reason"), completed_at=param("now"),
        ).where(Turn.id == param("turn")),
            stop_reason=_db_value(Turn, "stop_reason", stop_reason), now=now, turn=turn.id)
        turn.state, turn.stop_reason, turn.completed_at = TURN_COMPLETE, stop_reason, now

    def insert_message(self, columns: Mapping[str, Any]) -> Message:
        """Inserts a message row with all its columns at once (and the bytes of its texts,
        `text_bytes`); returns it with its position."""
        columns = {**columns, "text_bytes": sum(
            utf8_bytes(_db_value(Message, name, columns.get(name, ""))) for name in MESSAGE_TEXTS)}
        cursor = self._insert(Message, columns)
        # PostgreSQL answers the new key through the statement's RETURNING clause (peewee
        # adds it there); SQLite through the cursor's lastrowid.
        position = int(cursor.fetchone()[0] if self._postgres else cursor.lastrowid)
        return Message(position=position, **columns)

    def session_facts(self, session_id: str) -> tuple[str, str] | None:
        """(task_id, agent) of a session, or None when it does not exist."""
        row = self._run("session_facts", lambda: (
            Session.select(Session.task, Session.agent).where(Session.id == param("session"))),
            session=session_id).fetchone()
        task, agent = Session.task, Session.agent  # their text as stored (`nul_text`)
        return None if row is None else (str(task.python_value(row[0])),  # type: ignore[no-untyped-call]
                                         str(agent.python_value(row[1])))

    def tool_message_version(self, session_id: str, tool_call_id: str) -> tuple[int, int] | None:
        """(position, state_version) of the session's message for a tool call, or None."""
        row = self._run("tool_message_version", lambda: (
            Message.select(Message.position, Message.state_version)
            .where((Message.session == param("session"))
                   & (Message.tool_call_id == param("tool_call_id")))),
            session=session_id,
            tool_call_id=_db_value(Message, "tool_call_id", tool_call_id)).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def append_chunk(self, position: int, stream: str, text: str) -> int:
        """Appends a chunk row; returns the UTF-8 bytes of its text (what trimming counts)."""
        chunk = packing.pack(text)
        self._run("append_chunk", lambda: OutputChunk.insert(
            message=param("position"), stream=param("stream"), text_bytes=param("text_bytes"),
            packed=param("packed"), data=param("data")),
            position=position, stream=stream, text_bytes=chunk.text_bytes, packed=chunk.packed,
            data=_db_value(OutputChunk, "data", chunk.text))
        return chunk.text_bytes

    def replace_stream(self, position: int, stream: str, text: str | None) -> int:
        """Rewrites a stream as one chunk; None removes it. An empty chunk records "reported
        but empty", which differs from "never reported". Returns the bytes it holds now."""
        self._run("delete_stream", lambda: OutputChunk.delete().where(
            (OutputChunk.message == param("position")) & (OutputChunk.stream == param("stream"))),
            position=position, stream=stream)
        return 0 if text is None else self.append_chunk(position, stream, text)

    def drop_chunks_before(self, position: int, stream: str, keep: int) -> int:
        """Deletes a stream's oldest chunk rows that the newest `keep` bytes do not reach;
        returns the bytes the remaining rows hold. Nothing is rewritten: the retained text
        is the newest bytes of the rows, and readers bound them again."""
        # Rows written before migration step 16 record no size and are never packed: their
        # bytes, not characters, are counted. SQLite's LENGTH counts bytes of a BLOB;
        # PostgreSQL has no BLOB to cast to, and octet_length counts the bytes of its text (as
        # stored: a NUL counts as the four bytes of its escape, see `nul_text`).
        size = fn.COALESCE(OutputChunk.text_bytes,
                           fn.octet_length(OutputChunk.data) if self._postgres
                           else fn.LENGTH(OutputChunk.data.cast("BLOB")))
        sizes = self._run("chunk_sizes", lambda: (
            OutputChunk.select(OutputChunk.id, size)
            .where((OutputChunk.message == param("position"))
                   & (OutputChunk.stream == param("stream")))
            .order_by(OutputChunk.id.desc())), position=position, stream=stream).fetchall()
        held = 0
        for chunk_id, size in sizes:
            held += int(size)
            if held >= keep:
                self._run("drop_chunks", lambda: OutputChunk.delete().where(
                    (OutputChunk.message == param("position"))
                    & (OutputChunk.stream == param("stream"))
                    & (OutputChunk.id < param("first"))),
                    position=position, stream=stream, first=chunk_id)
                break
        return held

    def next_revision(self, session_id: str) -> int:
        """The session's next feed revision: one more than the revision on its row.

        Another writer on the same database file would make the remembered value stale; its
        event would then collide on the (session, revision) key, the unit of work fail and
        re-run after `forget`, so revisions stay gapless either way. With other writers, the
        value comes from the row `lock_sessions` locked, so it cannot be stale.
        """
        latest = self._revisions.get(session_id)
        if latest is None:
            row = self._run("latest_revision", lambda: (
                Session.select(Session.revision).where(Session.id == param("session"))),
                session=session_id).fetchone()
            latest = 0 if row is None else int(row[0])
            if len(self._revisions) >= MAX_REMEMBERED_SESSIONS:
                self._revisions.clear()
        self._revisions[session_id] = latest + 1
        return latest + 1

    def insert_event(self, session_id: str, revision: int, event_type: str,
                     position: int, now: int, turn_id: str | None = None) -> None:
        """Logs a feed event and makes its revision the session's, which is active `now`: the
        row keeps the revision when events are pruned. A turn event names its turn and
        position 0 (no message)."""
        self._run("insert_event", lambda: Event.insert(
            session_number=param("number"), revision=param("revision"), type=param("type"),
            message=param("position"), turn_id=param("turn")),
            number=self._number(session_id), revision=revision, type=event_type,
            position=position, turn=turn_id)
        if not self.single_writer:
            self.announced[session_id] = revision
        self._run("session_revision", lambda: Session.update(
            revision=param("revision"), active_at=param("now")).where(
            Session.id == param("session")), revision=revision, now=now, session=session_id)

    def prune_events(self, session_id: str, through: int) -> int:
        """Deletes the session's events up to revision `through` (a key range) and makes it
        the session's compaction point; the revision itself stays. Returns how many went.

        The session's number is read in this statement, from its id: a number found earlier
        may since belong to another session (the session deleted, its number given again)."""
        pruned = self._affected(self._run("prune_events", lambda: Event.delete().where(
            (Event.session_number == _number_of_session())
            & (Event.revision <= param("through"))),
            session=session_id, through=through))
        # The larger of two values: MAX(a, b) in SQLite, GREATEST(a, b) in PostgreSQL (whose
        # MAX is only the aggregate).
        larger = fn.GREATEST if self._postgres else fn.MAX
        self._run("compacted_revision", lambda: Session.update(
            compacted_revision=larger(Session.compacted_revision, param("through"))).where(
            Session.id == param("session")), through=through, session=session_id)
        return pruned

    def prune_receipts(self, session_id: str, cutoff: int) -> int:
        """Deletes the session's publish receipts older than `cutoff`: all of them once the
        session was last active before it, else those of messages unchanged since (a
        receipt is never newer than its message's last change), and those of updates that
        changed no message (a thought, a plan, a held terminal update) with a lower sequence
        than one of these: sequences grow with time. Returns how many went. The number is
        read from the id here too (see `prune_events`)."""
        idle = self._run("prune_idle_receipts", lambda: PublishReceipt.delete().where(
            (PublishReceipt.session_number == _number_of_session())
            & fn.EXISTS(Session.select(Session.id).where(
                (Session.id == param("session")) & (Session.active_at < param("cutoff"))))),
            session=session_id, cutoff=cutoff)
        old_messages = Message.select(Message.position).where(
            (Message.session == param("session")) & (Message.updated_at < param("cutoff")))
        of_old_messages = ((PublishReceipt.session_number == _number_of_session())
                           & PublishReceipt.message_position.in_(old_messages))
        # Before those go: the newest of them bounds the older receipts without a message.
        newest_old = PublishReceipt.select(fn.MAX(PublishReceipt.sequence)).where(
            of_old_messages)
        messageless = self._run("prune_messageless_receipts", lambda: (
            PublishReceipt.delete().where(
                (PublishReceipt.session_number == _number_of_session())
                & PublishReceipt.message_position.is_null()
                & (PublishReceipt.sequence < newest_old))),
            session=session_id, cutoff=cutoff)
        old = self._run("prune_old_receipts", lambda: PublishReceipt.delete().where(
            of_old_messages), session=session_id, cutoff=cutoff)
        return self._affected(idle, messageless, old)

    def receipt(self, session_id: str, sequence: int) -> StoredReceipt | None:
        """The receipt of the sequence, None when it is not stored."""
        row = self._run("receipt", lambda: (
            PublishReceipt.select(PublishReceipt.message_position, PublishReceipt.payload_digest)
            .where((PublishReceipt.session_number == param("number"))
                   & (PublishReceipt.sequence == param("sequence")))),
            number=self._number(session_id), sequence=sequence).fetchone()
        if row is None:
            return None
        return StoredReceipt(None if row[0] is None else int(row[0]),
                             None if row[1] is None else bytes(row[1]))

    def insert_receipt(self, session_id: str, sequence: int, position: int | None,
                       digest: bytes) -> None:
        self._run("insert_receipt", lambda: PublishReceipt.insert(
            session_number=param("number"), sequence=param("sequence"),
            message_position=param("position"), payload_digest=param("digest")),
            number=self._number(session_id), sequence=sequence, position=position, digest=digest)

    def terminal_message(self, session_id: str, terminal_id: str) -> tuple[int, str] | None:
        """(position, tool call id) of the message a session's terminal is linked to."""
        row = self._run("terminal_message", lambda: (
            TerminalLink.select(TerminalLink.message, Message.tool_call_id)
            .join(Message, on=(TerminalLink.message == Message.position))
            .where((TerminalLink.session == param("session"))
                   & (TerminalLink.terminal_id == param("terminal_id")))),
            session=session_id,
            terminal_id=_db_value(TerminalLink, "terminal_id", terminal_id)).fetchone()
        return None if row is None else (
            int(row[0]), str(Message.tool_call_id.python_value(row[1])))

    def link_terminal(self, session_id: str, terminal_id: str, position: int) -> None:
        self._insert(TerminalLink, {"session": session_id, "terminal_id": terminal_id,
                                    "message": position})

    def unlink_terminal(self, session_id: str, terminal_id: str) -> None:
        self._run("unlink_terminal", lambda: TerminalLink.delete().where(
            (TerminalLink.session == param("session"))
            & (TerminalLink.terminal_id == param("terminal_id"))),
            session=session_id, terminal_id=_db_value(TerminalLink, "terminal_id", terminal_id))

    def held_terminal_totals(self, session_id: str) -> tuple[int, int]:
        """(updates, decoded data bytes) the session holds for terminals not yet linked."""
        row = self._run("held_terminal_totals", lambda: (
            HeldTerminalUpdate.select(fn.COUNT(HeldTerminalUpdate.id),
                                      fn.COALESCE(fn.SUM(HeldTerminalUpdate.data_bytes), 0))
            .where(HeldTerminalUpdate.session == param("session"))),
            session=session_id).fetchone()
        return int(row[0]), int(row[1])

    def hold_terminal_update(self, session_id: str, terminal_id: str, hinted_call: str | None,
                             payload: str, data_bytes: int) -> None:
        self._insert(HeldTerminalUpdate, {
            "session": session_id, "terminal_id": terminal_id, "hinted_call": hinted_call,
            "payload": payload, "data_bytes": data_bytes})

    def held_terminal_updates(self, session_id: str) -> list[tuple[int, str, str | None, str]]:
        """(id, terminal id, hinted call, payload) of every update the session holds, in
        arrival order (at most MAX_HELD_TERMINAL_UPDATES rows)."""
        rows = self._run("held_terminal_updates", lambda: (
            HeldTerminalUpdate.select(HeldTerminalUpdate.id, HeldTerminalUpdate.terminal_id,
                                      HeldTerminalUpdate.hinted_call, HeldTerminalUpdate.payload)
            .where(HeldTerminalUpdate.session == param("session"))
            .order_by(HeldTerminalUpdate.id)), session=session_id).fetchall()
        terminal, hinted = HeldTerminalUpdate.terminal_id, HeldTerminalUpdate.hinted_call
        return [(int(row[0]), str(terminal.python_value(row[1])),
                 None if row[2] is None else str(hinted.python_value(row[2])), str(row[3]))
                for row in rows]

    def release_held_terminal_update(self, held_id: int) -> None:
        self._run("release_terminal_update", lambda: HeldTerminalUpdate.delete().where(
            HeldTerminalUpdate.id == param("id")), id=held_id)

    def update_message(self, position: int, columns: Mapping[str, Any],
                       expected_version: int | None = None) -> None:
        """Writes the named columns of a message (one compiled form per column set).

        With `expected_version`, the row must still be at that state version: otherwise
        someone else wrote it since it was read, and `StaleWriteError` is raised (the unit of
        work then rolls back and runs again on fresh data).
        """
        names = tuple(sorted(columns))
        checked = expected_version is not None
        texts = [name for name in MESSAGE_TEXTS if name in columns]

        def build() -> Query:
            where = Message.position == param("_position")
            if checked:
                where &= Message.state_version == param("_expected")
            assignments: dict[Any, Any] = {getattr(Message, name): param(name)
                                           for name in names}
            if texts:
                assignments[Message.text_bytes] = _text_bytes_after(texts)
            return Message.update(assignments).where(where)

        values = {name: _db_value(Message, name, columns[name]) for name in names}
        if texts:
            values["_text_bytes"] = sum(utf8_bytes(values[name]) for name in texts)
        if checked:
            values["_expected"] = expected_version
        cursor = self._run(("update_message", names, checked), build, _position=position,
                           **values)
        if checked:
            self._unverified.append((cursor, position))
            if self._pipeline is None:  # not sent ahead: its row count is known now
                self.verify()


def _text_bytes_after(written: Sequence[str]) -> Expression:
    """`text_bytes` once the `written` texts are set: their bytes (the `_text_bytes`
    parameter) and those of the others as the row holds them (an UPDATE reads the old row)."""
    kept = [stored_bytes(getattr(Message, name)) for name in MESSAGE_TEXTS
            if name not in written]
    return cast(Expression, functools.reduce(operator.add, kept, param("_text_bytes")))


def _number_of_session() -> Select:
    """The number of the session whose id is the `session` parameter (no row: NULL, which
    matches nothing)."""
    return Session.select(Session.number).where(Session.id == param("session"))


def _db_value(model: type[Model], name: str, value: Any) -> Any:
    # The markers bypass peewee's field conversion, so convert here.
    return getattr(model, name).db_value(value)

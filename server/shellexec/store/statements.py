"""The publish path's statements, compiled once from peewee queries.

peewee builds the SQL text anew from the query tree on every execution; for the small
statements of a publish that costs several times what SQLite takes to run them (measured:
about 60 % of a publish's time). `Statements` builds each hot query once with named markers
in place of its values, keeps the SQL text and the positions of the markers, and afterwards
only fills in the values. The queries are still written with the models, so the schema lives
in one place; nothing here is hand-written SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from peewee import Database as PeeweeDatabase
from peewee import Query, Value, fn

from shellexec.store.errors import StaleWriteError
from shellexec.store.models import Event, Message, OutputChunk, PublishReceipt, Session

_MARK = "\x00shellexec-param:"


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
    """Compiled hot statements for one bound database (used by units of work only)."""

    def __init__(self, db: PeeweeDatabase) -> None:
        self._db = db
        self._compiled: dict[object, _Compiled] = {}
        # The latest feed revision of each session this writer has given out. The event
        # table is the truth; this saves reading it back on every publish.
        self._revisions: dict[str, int] = {}

    def forget(self) -> None:
        """Drops what is remembered from the database (after a rollback it may be ahead)."""
        self._revisions.clear()

    def _run(self, key: object, build: Callable[[], Query], **values: Any) -> Any:
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = _Compiled(build())
        # Straight to this thread's DB-API connection (inside the unit's transaction): peewee's
        # execute_sql adds a cursor wrapper and a log call per statement.
        connection = self._db.connection()  # type: ignore[no-untyped-call]  # peewee is untyped
        return connection.execute(compiled.sql, compiled.params(values))

    def session_facts(self, session_id: str) -> tuple[str, str] | None:
        """(task_id, agent) of a session, or None when it does not exist."""
        row = self._run("session_facts", lambda: (
            Session.select(Session.task, Session.agent).where(Session.id == param("session"))),
            session=session_id).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def tool_message_version(self, session_id: str, tool_call_id: str) -> tuple[int, int] | None:
        """(position, state_version) of the session's message for a tool call, or None."""
        row = self._run("tool_message_version", lambda: (
            Message.select(Message.position, Message.state_version)
            .where((Message.session == param("session"))
                   & (Message.tool_call_id == param("tool_call")))),
            session=session_id, tool_call=tool_call_id).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def append_chunk(self, position: int, stream: str, text: str) -> None:
        self._run("append_chunk", lambda: OutputChunk.insert(
            message=param("position"), stream=param("stream"), data=param("data")),
            position=position, stream=stream, data=text)

    def replace_stream(self, position: int, stream: str, text: str | None) -> None:
        """Rewrites a stream as one chunk; None removes it. An empty chunk records "reported
        but empty", which differs from "never reported"."""
        self._run("delete_stream", lambda: OutputChunk.delete().where(
            (OutputChunk.message == param("position")) & (OutputChunk.stream == param("stream"))),
            position=position, stream=stream)
        if text is not None:
            self.append_chunk(position, stream, text)

    def next_revision(self, session_id: str) -> int:
        """The session's next feed revision: one more than its latest event's.

        Another writer on the same database file would make the remembered value stale; its
        event would then collide on the (session, revision) key, the unit of work fail and
        re-run after `forget`, so revisions stay gapless either way.
        """
        latest = self._revisions.get(session_id)
        if latest is None:
            row = self._run("latest_revision", lambda: (
                Event.select(fn.MAX(Event.revision)).where(Event.session == param("session"))),
                session=session_id).fetchone()
            latest = 0 if row[0] is None else int(row[0])
        self._revisions[session_id] = latest + 1
        return latest + 1

    def insert_event(self, session_id: str, revision: int, event_type: str,
                     position: int) -> None:
        self._run("insert_event", lambda: Event.insert(
            session=param("session"), revision=param("revision"), type=param("type"),
            message=param("position")),
            session=session_id, revision=revision, type=event_type, position=position)

    def receipt(self, session_id: str, sequence: int) -> tuple[bool, int | None]:
        """(whether the sequence is stored, the message position it affected)."""
        row = self._run("receipt", lambda: (
            PublishReceipt.select(PublishReceipt.message_position)
            .where((PublishReceipt.session == param("session"))
                   & (PublishReceipt.sequence == param("sequence")))),
            session=session_id, sequence=sequence).fetchone()
        return (False, None) if row is None else (True, None if row[0] is None else int(row[0]))

    def insert_receipt(self, session_id: str, sequence: int, position: int | None) -> None:
        self._run("insert_receipt", lambda: PublishReceipt.insert(
            session=param("session"), sequence=param("sequence"),
            message_position=param("position")),
            session=session_id, sequence=sequence, position=position)

    def update_message(self, position: int, columns: Mapping[str, Any],
                       expected_version: int | None = None) -> None:
        """Writes the named columns of a message (one compiled form per column set).

        With `expected_version`, the row must still be at that state version: otherwise
        someone else wrote it since it was read, and `StaleWriteError` is raised (the unit of
        work then rolls back and runs again on fresh data).
        """
        names = tuple(sorted(columns))
        checked = expected_version is not None

        def build() -> Query:
            where = Message.position == param("_position")
            if checked:
                where &= Message.state_version == param("_expected")
            return Message.update(
                {getattr(Message, name): param(name) for name in names}).where(where)

        values = {name: _db_value(name, columns[name]) for name in names}
        if checked:
            values["_expected"] = expected_version
        cursor = self._run(("update_message", names, checked), build, _position=position,
                           **values)
        if checked and cursor.rowcount != 1:
            raise StaleWriteError(position)


def _db_value(name: str, value: Any) -> Any:
    # The markers bypass peewee's field conversion, so convert here.
    return getattr(Message, name).db_value(value)

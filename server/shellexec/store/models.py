"""The tables. Times are integer microseconds since the Unix epoch, UTC: exact, sortable and
the same on every engine.

A `Message` row holds everything a browser-facing payload needs (status, command, exit code,
byte counts, truncation) as columns maintained at write time. The output body of a shell
message lives in `OutputChunk` rows: appending a delta inserts one row instead of rewriting
the body, and nothing that lists messages ever reads them.
"""

from __future__ import annotations

from typing import Any, cast

from peewee import (
    AutoField,
    BigIntegerField,
    BlobField,
    BooleanField,
    CharField,
    CompositeKey,
    Expression,
    Field,
    ForeignKeyField,
    IntegerField,
    Model,
    PostgresqlDatabase,
    SchemaManager,
    TextField,
    fn,
)

from shellexec.store import nul_text
from shellexec.vocabulary import SESSION_IDLE, TASK_IDLE, TURN_RUNNING


class _NulSafe:
    """Stores text with NUL escaped where the engine needs it (PostgreSQL; `nul_text`)."""

    model: type[Model]

    def _escapes(self) -> bool:
        return isinstance(self.model._meta.database, PostgresqlDatabase)

    def db_value(self, value: Any) -> Any:
        value = super().db_value(value)  # type: ignore[misc]  # the peewee field's
        if isinstance(value, str) and self._escapes():
            return nul_text.escape(value)
        return value

    def python_value(self, value: Any) -> Any:
        if isinstance(value, str) and self._escapes():
            value = nul_text.unescape(value)
        return super().python_value(value)  # type: ignore[misc]


class AgentText(_NulSafe, TextField):
    """Text an agent chose (output, titles, commands): may hold any character, NUL too."""


class AgentChars(_NulSafe, CharField):
    """A bounded string an agent or caller chose (task ids, tool call ids): any character.

    Escaping makes a value up to twice as long (each NUL or U+FFFF becomes two characters),
    and PostgreSQL's `varchar(n)` refuses what is longer than `n`: where values are escaped,
    the column holds twice `max_length`. The bound itself is the validation layer's."""

    def get_modifiers(self) -> list[int] | None:
        modifiers: list[int] | None = super().get_modifiers()
        if modifiers and self._escapes():
            return [modifiers[0] * nul_text.GROWTH]
        return modifiers


class _PortableSchema(SchemaManager):
    """Leaves SQLite's `WITHOUT ROWID` out of the tables of any other engine: it is how
    SQLite clusters a table on its key, and PostgreSQL has no such clause (its tables are
    heaps with the key in an index either way)."""

    def _create_table(self, safe: bool = True, **options: Any) -> Any:
        if isinstance(self.database, PostgresqlDatabase) and self.model._meta.without_rowid:
            self.model._meta.without_rowid = False
            try:
                return super()._create_table(safe, **options)  # type: ignore[misc]
            finally:
                self.model._meta.without_rowid = True
        return super()._create_table(safe, **options)  # type: ignore[misc]


class BaseModel(Model):
    """Unbound base model; `Database` binds every model at start-up."""


class SchemaVersion(BaseModel):
    """One row per applied migration step."""

    version = IntegerField(primary_key=True)
    applied_at = BigIntegerField()

    class Meta:
        table_name = "schema_version"


class Task(BaseModel):
    """A unit of work the agent sessions belong to; created on first use."""

    id = AgentChars(primary_key=True, max_length=128)
    state = CharField(max_length=16, default=TASK_IDLE)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()


class Session(BaseModel):
    """An agent session.

    `revision` is the revision of its latest feed event, written with the event: events may
    be pruned, revisions never go back. `compacted_revision` is the revision up to which its
    events have been pruned (0: none yet). `active_at` is when anything of it last changed
    (created, a turn, a feed event): retention and compaction go by it (ADR 0062). `number`
    is a small integer key the per-publish rows (events, receipts) use instead of the
    36-character id (ADR 0024).
    """

    task_id: str  # the foreign key's raw value, set by peewee
    id = CharField(primary_key=True, max_length=40)
    # Foreign keys whose column leads another index or the primary key get no index of their
    # own: a second copy of the same order is one more page to write per insert.
    task = ForeignKeyField(Task, backref="sessions", column_name="task_id", on_delete="CASCADE",
                           index=False)
    agent = AgentChars(max_length=64, default="")
    state = CharField(max_length=16, default=SESSION_IDLE)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()
    number = IntegerField(unique=True)
    revision = BigIntegerField(default=0)
    compacted_revision = BigIntegerField(default=0)
    # Written with the revision (the same statement): no index, so a publish writes no more
    # pages; the housekeeping sweep reads the whole (small) table instead.
    active_at = BigIntegerField(default=0)
    # Its shell commands, and those whose result is `failure`, kept as each command is written
    # so the session list needs no count over messages (ADR 0091).
    command_count = IntegerField(default=0)
    failure_count = IntegerField(default=0)

    class Meta:
        indexes = ((("task", "created_at"), False),)


class Turn(BaseModel):
    """One prompt of a session."""

    session_id: str
    id = CharField(primary_key=True, max_length=40)
    session = ForeignKeyField(Session, backref="turns", column_name="session_id",
                              on_delete="CASCADE", index=False)
    state = CharField(max_length=16, default=TURN_RUNNING)
    stop_reason = AgentChars(max_length=64, default="")
    started_at = BigIntegerField()
    completed_at = BigIntegerField(null=True)

    class Meta:
        indexes = ((("session", "state"), False),)


class Message(BaseModel):
    """A chat message or tool call with its summary columns; never its output body."""

    session_id: str
    position = AutoField()
    id = CharField(unique=True, max_length=40)
    session = ForeignKeyField(Session, backref="messages", column_name="session_id",
                              on_delete="CASCADE", index=False)
    task_id = AgentChars(max_length=128)
    turn_id = CharField(max_length=40, default="")
    author_type = CharField(max_length=8)
    type = CharField(max_length=16)
    # The bytes its texts (MESSAGE_TEXTS) take as stored, kept by every write (`Statements`):
    # a page or a replay weighs a message by it without reading its texts (ADR 0133). Before
    # the texts, so that SQLite finds it without reading through them to a later column.
    text_bytes = IntegerField(default=0)
    content = AgentText(default="")
    tool_call_id = AgentChars(max_length=256, null=True)
    status = CharField(max_length=16, default="")
    title = AgentText(default="")
    is_shell = BooleanField(default=False)
    command = AgentText(default="")
    work_dir = AgentText(default="")
    exit_code = IntegerField(null=True)
    truncated = BooleanField(default=False)
    has_output = BooleanField(default=False)
    stdout_bytes = IntegerField(default=0)
    stderr_bytes = IntegerField(default=0)
    # The normalization fold's state without the bodies (normalize.dump_state), so a restart
    # resumes the fold exactly where it stopped.
    fold_state = TextField(null=True)
    # Bumped on every write; lets an in-process cache of fold states detect another writer.
    state_version = IntegerField(default=0)
    # Raw bytes held in OutputChunk rows per stream (may exceed the retained bound until
    # the store compacts them).
    stdout_stored_bytes = IntegerField(default=0)
    stderr_stored_bytes = IntegerField(default=0)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        indexes = (
            (("session", "tool_call_id"), True),
            (("session", "position"), False),
        )


# The texts of a message that an agent chose, each up to 256 KiB (`text_bytes` weighs them).
MESSAGE_TEXTS = ("content", "title", "command", "work_dir")


def stored_bytes(text: Field) -> Expression:
    """The bytes of a text column as stored, counted by the engine: SQLite's `length()` of a
    text stops at its first NUL, the length of its bytes does not; PostgreSQL's text has no
    NUL (`nul_text`) and `octet_length` reads only its stored size."""
    if isinstance(Message._meta.database, PostgresqlDatabase):
        return cast(Expression, fn.OCTET_LENGTH(text))
    return cast(Expression, fn.LENGTH(text.cast("BLOB")))


def utf8_bytes(text: str) -> int:
    """The bytes `text` takes as stored, in UTF-8 (a lone surrogate counts its 3 bytes
    instead of raising: this only weighs)."""
    return len(text.encode("utf-8", "surrogatepass"))


class OutputChunk(BaseModel):
    """A piece of one output stream of a shell message, in append order.

    Its text is `data`, or deflated in `packed` with `data` empty when that is smaller
    (`packing`, ADR 0150)."""

    id = AutoField()
    message = ForeignKeyField(Message, field=Message.position, column_name="message_position",
                              on_delete="CASCADE", index=False)
    stream = CharField(max_length=6)
    data = AgentText()
    # The UTF-8 bytes of its text however it is stored, so that a stream is trimmed by its
    # bytes without inflating it; null in rows written before migration step 16. That step
    # added both columns at the end of existing tables, where a new table has them too
    # (ADR 0137).
    text_bytes = IntegerField(null=True)
    packed = BlobField(null=True)

    class Meta:
        table_name = "output_chunk"
        indexes = ((("message", "stream", "id"), False),)


class Event(BaseModel):
    """A feed event: the durable log a watcher resumes from.

    Clustered on its key (no rowid, no second index): an event is one small row in one
    b-tree. `message` names its message's position without a foreign key, which would need
    an index of its own to check; events go with their session (ADR 0024).
    """

    session_number = ForeignKeyField(Session, field=Session.number,
                                     column_name="session_number", on_delete="CASCADE",
                                     index=False)
    revision = IntegerField()
    type = CharField(max_length=32)
    message = IntegerField(column_name="message_position")
    # A turn event's turn (its `message` is 0); null for message events (ADR 0090).
    turn_id = CharField(max_length=40, null=True)

    class Meta:
        primary_key = CompositeKey("session_number", "revision")
        without_rowid = True
        schema_manager_class = _PortableSchema


class PublishReceipt(BaseModel):
    """Marks a publish sequence number as stored, so a retry changes nothing.

    `payload_digest` tells a retry (the same update) from a conflict (another update under the
    same sequence); receipts written before migration step 4 have none (ADR 0060).
    """

    session_number = ForeignKeyField(Session, field=Session.number,
                                     column_name="session_number", on_delete="CASCADE",
                                     index=False)
    sequence = BigIntegerField()
    message_position = IntegerField(null=True)
    payload_digest = BlobField(null=True)

    class Meta:
        table_name = "publish_receipt"
        primary_key = CompositeKey("session_number", "sequence")
        without_rowid = True
        schema_manager_class = _PortableSchema


class SessionRequest(BaseModel):
    """A CreateSession `request_id` of one task and the session it created, so a retry
    creates nothing.

    Request ids are scoped by their task (ADR 0118): the same id for another task is another
    request, and tells its caller nothing of this one; within a task, one used again for
    another agent is detected. Rows older than the idempotency window are deleted (ADR 0007).
    """

    task_id = AgentChars(max_length=128)
    request_id = CharField(max_length=64)
    session = ForeignKeyField(Session, column_name="session_id", on_delete="CASCADE")
    created_at = BigIntegerField(index=True)

    class Meta:
        table_name = "session_request"
        primary_key = CompositeKey("task_id", "request_id")


# The `id` of the one row of `SessionCounter`.
SESSION_COUNTER_ROW = 1


class SessionCounter(BaseModel):
    """The highest session number ever given, in its one row (`SESSION_COUNTER_ROW`):
    raised in the transaction that creates a session and never lowered, so a deleted
    session's number is never given again (ADR 0118)."""

    id = IntegerField(primary_key=True)
    highest_number = IntegerField()

    class Meta:
        table_name = "session_counter"


class TurnRequest(BaseModel):
    """A StartTurn `request_id` of one session and the turn it started (ADR 0007)."""

    turn_id: str
    session = ForeignKeyField(Session, column_name="session_id", on_delete="CASCADE",
                              index=False)
    request_id = CharField(max_length=64)
    turn = ForeignKeyField(Turn, column_name="turn_id", on_delete="CASCADE")
    created_at = BigIntegerField(index=True)

    class Meta:
        table_name = "turn_request"
        primary_key = CompositeKey("session", "request_id")


class ApiToken(BaseModel):
    """A bearer token: only the SHA-256 of its secret is stored (ADR 0050). `scopes` and
    `task_patterns` are comma-separated; no patterns means every task."""

    id = AutoField()
    name = CharField(unique=True, max_length=64)
    token_hash = CharField(unique=True, max_length=64)
    scopes = CharField(max_length=64)
    task_patterns = TextField(default="")
    created_at = BigIntegerField()
    revoked_at = BigIntegerField(null=True)

    class Meta:
        table_name = "api_token"


class TerminalLink(BaseModel):
    """An ACP terminal of a session and the tool-call message its updates fold into: the
    first tool call whose content names the terminal, or the one its hosting client names
    (ADR 0086)."""

    session = ForeignKeyField(Session, column_name="session_id", on_delete="CASCADE",
                              index=False)
    terminal_id = AgentChars(max_length=256)
    message = ForeignKeyField(Message, field=Message.position, column_name="message_position",
                              on_delete="CASCADE", index=False)

    class Meta:
        table_name = "terminal_link"
        primary_key = CompositeKey("session", "terminal_id")


class HeldTerminalUpdate(BaseModel):
    """A terminal update that arrived before any tool call named its terminal, as the JSON it
    was published as, until one does (ADR 0086). `data_bytes` is what its data decodes to."""

    id = AutoField()
    session = ForeignKeyField(Session, column_name="session_id", on_delete="CASCADE",
                              index=False)
    terminal_id = AgentChars(max_length=256)
    # The tool call its hosting client named (`_meta`), when that call was not stored yet.
    hinted_call = AgentChars(max_length=256, null=True)
    payload = TextField()
    data_bytes = IntegerField(default=0)

    class Meta:
        table_name = "held_terminal_update"
        indexes = ((("session", "terminal_id", "id"), False),)


# The tables as migration step 1 created them; later steps add to this schema.
VERSION_1_MODELS: tuple[type[BaseModel], ...] = (
    SchemaVersion, Task, Session, Turn, Message, OutputChunk, Event, PublishReceipt,
)
# Step 2: the request ids of CreateSession and StartTurn.
REQUEST_MODELS: tuple[type[BaseModel], ...] = (SessionRequest, TurnRequest)

# Step 3: bearer tokens.
TOKEN_MODELS: tuple[type[BaseModel], ...] = (ApiToken,)

# Step 7: ACP terminals linked to tool calls, and their updates held until linked.
TERMINAL_MODELS: tuple[type[BaseModel], ...] = (TerminalLink, HeldTerminalUpdate)

# Step 11: the counter session numbers are given from.
COUNTER_MODELS: tuple[type[BaseModel], ...] = (SessionCounter,)

ALL_MODELS: tuple[type[BaseModel], ...] = (*VERSION_1_MODELS, *REQUEST_MODELS, *TOKEN_MODELS,
                                           *TERMINAL_MODELS, *COUNTER_MODELS)

"""Schema migrations, applied in order at start-up.

Each step is a function that receives the database inside a transaction. Step 1 creates the
first release's tables (`VERSION_1_MODELS`) as the models declare them now; a table added
later belongs to the step that adds it. A step that changes a table (`playhouse.migrate`
operations) looks first, so on a new database, which already has the current layout, it does
nothing. Never change what a released step does to an old database: add a step.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import time
from collections.abc import Callable, Iterator

from peewee import SQL, BigIntegerField, CharField, IntegerField, SqliteDatabase, Table, fn
from peewee import Database as PeeweeDatabase
from peewee import DatabaseError as PeeweeDatabaseError
from playhouse.migrate import SchemaMigrator
from playhouse.migrate import migrate as run_operations

from shellexec.store.errors import MigrationFailedError, NewerSchemaError, OlderSchemaError
from shellexec.store.models import (
    ALL_MODELS,
    COUNTER_MODELS,
    MESSAGE_TEXTS,
    REQUEST_MODELS,
    SESSION_COUNTER_ROW,
    TERMINAL_MODELS,
    TOKEN_MODELS,
    VERSION_1_MODELS,
    AgentChars,
    BaseModel,
    Event,
    Message,
    OutputChunk,
    PublishReceipt,
    SchemaVersion,
    Session,
    SessionCounter,
    SessionRequest,
    stored_bytes,
)
from shellexec.vocabulary import STATUS_FAILED, TERMINAL_STATUSES

MigrationStep = Callable[[PeeweeDatabase], None]


def _migrator(db: PeeweeDatabase) -> SchemaMigrator:
    """playhouse's migrator for the engine of `db` (SQLite or PostgreSQL): one history of
    steps for both. A new PostgreSQL database has the current layout from step 1, so the
    steps after it find nothing to change; the SQLite-only SQL below runs only on old SQLite
    files."""
    return SchemaMigrator.from_database(db)


def _create_schema(db: PeeweeDatabase) -> None:
    db.create_tables([m for m in VERSION_1_MODELS if m is not SchemaVersion])


def _add_request_ids(db: PeeweeDatabase) -> None:
    """The request ids that make CreateSession and StartTurn idempotent (ADR 0007)."""
    db.create_tables(list(REQUEST_MODELS))


def _add_tokens(db: PeeweeDatabase) -> None:
    """The bearer tokens callers authenticate with (ADR 0050)."""
    db.create_tables(list(TOKEN_MODELS))


def _add_payload_digests(db: PeeweeDatabase) -> None:
    """A digest of each receipt's update, so a sequence reused for another update is a
    conflict (ADR 0060). Receipts from before have none and stay plain duplicates. A database
    created since step 1 has the column already."""
    table, column = PublishReceipt._meta.table_name, PublishReceipt.payload_digest.column_name
    if column in {found.name for found in db.get_columns(table)}:
        return
    run_operations(_migrator(db).add_column(table, column, PublishReceipt.payload_digest))


# Indexes whose columns lead another index or the primary key (step 5 drops them).
REDUNDANT_INDEXES = {
    "session": "session_task_id",
    "turn": "turn_session_id",
    "message": "message_session_id",
    "output_chunk": "outputchunk_message_position",
    "turn_request": "turnrequest_session_id",
}


# New session columns are added nullable and filled at once: playhouse makes a column NOT
# NULL in SQLite by copying the table. A step that must change the layout of a table others
# refer to rebuilds it (`_rebuild`), which `migrate` lets it do without cascading.


def _number_sessions(db: PeeweeDatabase, migrator: SchemaMigrator) -> None:
    """Gives every session its integer key (its rowid, which a rebuild would not keep)."""
    if "number" in {column.name for column in db.get_columns("session")}:
        return
    run_operations(migrator.add_column("session", "number", IntegerField(null=True)))
    Session.update(number=SQL("rowid")).execute()
    run_operations(migrator.add_index("session", ("number",), unique=True))


def _keyed_by_number(db: PeeweeDatabase, migrator: SchemaMigrator,
                     model: type[BaseModel]) -> None:
    """Rebuilds the table of a per-publish model as the model now declares it (keyed by the
    session's number, clustered on its key, no extra index), keeping its rows."""
    name = model._meta.table_name
    if "session_number" in {column.name for column in db.get_columns(name)}:
        return
    old = f"{name}_v2"
    run_operations(migrator.rename_table(name, old))
    run_operations(*(migrator.drop_index(old, index.name) for index in db.get_indexes(old)
                     if not index.name.startswith("sqlite_autoindex")))
    db.create_tables([model])
    # Columns a later step adds (an event's `turn_id`) are not in the old table yet.
    present = {column.name for column in db.get_columns(old)}
    fields = [field for field in model._meta.sorted_fields
              if field.name != "session_number" and field.column_name in present]
    columns = [field.column_name for field in fields]
    source = Table(old).bind(db)
    rows = (source.select(Session.number, *(getattr(source.c, column) for column in columns))
            .join(Session, on=(source.c.session_id == Session.id)))
    model.insert_from(rows, [model._meta.fields["session_number"], *fields]).execute()
    # peewee drops tables only through a model.
    db.execute_sql(f'DROP TABLE "{old}"')  # type: ignore[no-untyped-call]


def _write_less(db: PeeweeDatabase) -> None:
    """What a publish writes, made fewer and smaller pages (ADR 0024): drops the indexes that
    repeat another's order, keys events and receipts by a session number and clusters them
    on their keys, and stores each session's revision (and compaction point) on its row.

    It looks before it changes: a database created since step 1 already has this layout."""
    migrator = _migrator(db)
    run_operations(*(migrator.drop_index(table, index)
                     for table, index in REDUNDANT_INDEXES.items()
                     if index in {found.name for found in db.get_indexes(table)}))
    _number_sessions(db, migrator)
    if "revision" not in {column.name for column in db.get_columns("session")}:
        run_operations(*(migrator.add_column("session", column, BigIntegerField(null=True))
                         for column in ("revision", "compacted_revision")))
        old_events = Table("event").bind(db)
        latest = (old_events.select(fn.COALESCE(fn.MAX(old_events.c.revision), 0))
                  .where(old_events.c.session_id == Session.id))
        Session.update(revision=latest, compacted_revision=0).execute()
    _keyed_by_number(db, migrator, Event)
    _keyed_by_number(db, migrator, PublishReceipt)


def _track_activity(db: PeeweeDatabase) -> None:
    """When each session was last active, for retention and feed compaction (ADR 0062):
    until its next change, the last time its row changed."""
    if "active_at" in {column.name for column in db.get_columns("session")}:
        return
    run_operations(_migrator(db).add_column("session", "active_at",
                                                 BigIntegerField(null=True)))
    Session.update(active_at=Session.updated_at).execute()


def _add_terminals(db: PeeweeDatabase) -> None:
    """Which tool call each ACP terminal's updates fold into, and the updates that arrived
    before any call named their terminal (ADR 0086). New tables: created only if absent."""
    db.create_tables(list(TERMINAL_MODELS), safe=True)


def _add_turn_events(db: PeeweeDatabase) -> None:
    """Feed events of turns name their turn (ADR 0090); message events leave it null."""
    if "turn_id" in {column.name for column in db.get_columns("event")}:
        return
    run_operations(_migrator(db).add_column("event", "turn_id",
                                            CharField(max_length=40, null=True)))


def _count_commands(db: PeeweeDatabase) -> None:
    """Each session's command and failure counts (ADR 0091), counted once from its messages."""
    if "command_count" in {column.name for column in db.get_columns("session")}:
        return
    run_operations(*(_migrator(db).add_column("session", column, IntegerField(null=True))
                     for column in ("command_count", "failure_count")))
    shell = Message.is_shell & (Message.session == Session.id)
    failed = (Message.status.in_(TERMINAL_STATUSES)
              & (((Message.exit_code.is_null(False)) & (Message.exit_code != 0))
                 | (Message.status == STATUS_FAILED)))
    Session.update(
        command_count=Message.select(fn.COUNT(Message.position)).where(shell),
        failure_count=Message.select(fn.COUNT(Message.position)).where(shell & failed),
    ).execute()


class _SessionRequestCopy(BaseModel):
    """Where step 10 keeps the rows of `session_request` while it builds the table anew."""

    task_id = CharField(max_length=128)
    request_id = CharField(max_length=64)
    session_id = CharField(max_length=40)
    created_at = BigIntegerField()

    class Meta:
        table_name = "session_request_copy"
        primary_key = False


def _scope_request_ids_by_task(db: PeeweeDatabase) -> None:
    """CreateSession request ids keyed by (task, request id) instead of the id alone (ADR
    0118). A primary key cannot change in place (SQLite) and the old table's constraint
    names would collide with the new one's (PostgreSQL), so the rows wait in a copy while
    the table is dropped and created anew; each keeps its session and its time (its window),
    and gets its session's task. A database created since step 2 has the new key already."""
    if "task_id" in {column.name for column in db.get_columns("session_request")}:
        return
    old = Table("session_request").bind(db)
    copy = _SessionRequestCopy
    with db.bind_ctx([copy]):
        db.create_tables([copy])
        copy.insert_from(
            old.select(Session.task, old.c.request_id, old.c.session_id, old.c.created_at)
            .join(Session, on=(old.c.session_id == Session.id)),
            [copy.task_id, copy.request_id, copy.session_id, copy.created_at]).execute()
        db.drop_tables([SessionRequest])
        db.create_tables([SessionRequest])
        SessionRequest.insert_from(
            copy.select(copy.task_id, copy.request_id, copy.session_id, copy.created_at),
            [SessionRequest.task_id, SessionRequest.request_id, SessionRequest.session,
             SessionRequest.created_at]).execute()
        db.drop_tables([copy])


def _count_session_numbers(db: PeeweeDatabase) -> None:
    """The counter new sessions take their numbers from (ADR 0118), starting at the highest
    number in use. Created only if absent."""
    db.create_tables(list(COUNTER_MODELS), safe=True)
    if SessionCounter.select().where(SessionCounter.id == SESSION_COUNTER_ROW).exists():
        return
    highest = Session.select(fn.COALESCE(fn.MAX(Session.number), 0)).scalar()
    SessionCounter.insert(id=SESSION_COUNTER_ROW, highest_number=int(highest)).execute()


def _weigh_texts(db: PeeweeDatabase) -> None:
    """Each message's `text_bytes` (ADR 0133), counted once from its texts."""
    table = Message._meta.table_name
    if "text_bytes" in {column.name for column in db.get_columns(table)}:
        return
    run_operations(_migrator(db).add_column(table, "text_bytes", IntegerField(null=True)))
    Message.update(text_bytes=functools.reduce(
        operator.add, (stored_bytes(getattr(Message, name)) for name in MESSAGE_TEXTS))).execute()


class _RebuiltMessage(Message):
    """Where step 13 copies the rows of `message`, laid out as `Message` declares it."""

    class Meta:
        table_name = "message_rebuilt"


def _rebuild_message_table(db: PeeweeDatabase) -> None:
    """`message` laid out as the model declares it (ADR 0137). Step 12 added `text_bytes` at
    the end of an existing table, after the texts, and nullable (SQLite's `ALTER TABLE` can do
    no better): SQLite then reaches it only by reading through each long text's overflow
    pages, so weighing a page of long messages read all of them. On SQLite the table is built
    anew with every row and position, the column before the texts and NOT NULL; PostgreSQL
    keeps long texts out of the row, so there the column only becomes NOT NULL. A table that
    already has the declared layout (every new database) is left as it is."""
    if not isinstance(db, SqliteDatabase):
        text_bytes = next(column for column in db.get_columns(Message._meta.table_name)
                          if column.name == Message.text_bytes.column_name)
        if text_bytes.null:
            run_operations(_migrator(db).add_not_null(Message._meta.table_name,
                                                      Message.text_bytes.column_name))
        return
    present = [column.name for column in db.get_columns(Message._meta.table_name)]
    declared = [field.column_name for field in Message._meta.sorted_fields]
    if present != [name for name in declared if name in present]:
        _rebuild(db, Message, _RebuiltMessage)


class _RebuiltSession(Session):
    """Where step 14 copies the rows of `session`, laid out as `Session` declares it."""

    class Meta:
        table_name = "session_rebuilt"


def _declare_session_columns(db: PeeweeDatabase) -> None:
    """`session`'s columns NOT NULL as the model declares them (ADR 0137). Steps 5, 6 and 9
    added `number`, `revision`, `compacted_revision`, `active_at` and the command counts to
    existing tables as nullable columns, and filled them; every write has set them since. A
    new database has them NOT NULL, and so now does an upgraded one: SQLite builds the table
    anew with every row (as step 13 does for `message`), PostgreSQL alters the columns. A
    table that has the declared layout (every new database) is left as it is."""
    name = Session._meta.table_name
    declared = Session._meta.columns
    nullable = [column.name for column in db.get_columns(name)
                if column.null and not declared[column.name].null]
    if not nullable:
        return
    if isinstance(db, SqliteDatabase):
        _rebuild(db, Session, _RebuiltSession)
    else:
        run_operations(*(_migrator(db).add_not_null(name, column) for column in nullable))


def _widen_escaped_columns(db: PeeweeDatabase) -> None:
    """PostgreSQL: room for escaped text in every bounded column of agent-chosen text
    (`AgentChars`, and the references to one). An id of NUL characters at its full length
    escapes to twice as many characters, which `varchar(n)` refused. Widening a `varchar`
    changes no stored row and rebuilds no index. SQLite does not enforce the length, and a new
    database has the width already."""
    if isinstance(db, SqliteDatabase):
        return
    migrator = _migrator(db)
    run_operations(*(migrator.alter_column_type(model._meta.table_name, field.column_name, field)
                     for model in ALL_MODELS for field in model._meta.sorted_fields
                     if isinstance(getattr(field, "rel_field", field), AgentChars)))


def _rebuild(db: SqliteDatabase, model: type[BaseModel], rebuilt: type[BaseModel]) -> None:
    """SQLite's way to change a table's layout, keeping its rows: `rebuilt` (a subclass of
    `model` under another table name) is created, the rows are copied column by column, the
    old table is dropped and the new one takes its name, then gets the model's indexes. The
    other tables' references name the table, so they refer to the new one, which keeps every
    key they hold; `migrate` keeps SQLite from cascading the drop to them."""
    if db.pragma("foreign_keys"):  # inside a caller's transaction, where it cannot be off
        raise RuntimeError(f"rebuilding {model._meta.table_name!r} needs foreign keys off")
    name = model._meta.table_name
    # Columns a later step adds are not in the old table yet: they start empty (nullable, as
    # such columns are) and that step finds them there.
    present = {column.name for column in db.get_columns(name)}
    fields = [field for field in model._meta.sorted_fields if field.column_name in present]
    with db.bind_ctx([rebuilt]):
        # The table alone: its indexes are named after the table, so they come after the rename.
        rebuilt._schema.create_table(safe=False)  # type: ignore[attr-defined]
        rebuilt.insert_from(model.select(*fields),
                            [rebuilt._meta.fields[field.name] for field in fields]).execute()
    db.execute_sql(f'DROP TABLE "{name}"')  # type: ignore[no-untyped-call]
    run_operations(_migrator(db).rename_table(rebuilt._meta.table_name, name))
    model._schema.create_indexes(safe=False)  # type: ignore[attr-defined]


def _pack_output(db: PeeweeDatabase) -> None:
    """`output_chunk`'s `text_bytes` and `packed` (ADR 0150), which a new database has. The
    rows already there stay text, with no recorded size, and are read and trimmed as they
    were: nothing is rewritten."""
    table = OutputChunk._meta.table_name
    present = {column.name for column in db.get_columns(table)}
    migrator = _migrator(db)
    run_operations(*(migrator.add_column(table, field.column_name, field)
                     for field in (OutputChunk.text_bytes, OutputChunk.packed)
                     if field.column_name not in present))


STEPS: tuple[MigrationStep, ...] = (
    _create_schema, _add_request_ids, _add_tokens, _add_payload_digests, _write_less,
    _track_activity, _add_terminals, _add_turn_events, _count_commands,
    _scope_request_ids_by_task, _count_session_numbers, _weigh_texts, _rebuild_message_table,
    _declare_session_columns, _widen_escaped_columns, _pack_output)
SCHEMA_VERSION = len(STEPS)


def applied_version(db: PeeweeDatabase) -> int:
    """The highest applied step, 0 for a new database."""
    db.create_tables([SchemaVersion])
    latest = SchemaVersion.select(SchemaVersion.version).order_by(
        SchemaVersion.version.desc()).first()
    return int(latest.version) if latest else 0


def migrate(db: PeeweeDatabase, upgrade: bool = True) -> int:
    """Applies every step the database lacks, all in one transaction; returns the resulting
    schema version. MigrationFailedError, with nothing changed, when a step or the COMMIT of
    the steps fails, with the first error (a full disk: see `_one_transaction`). Without
    `upgrade`, only a new database is migrated (made): one that has some steps and lacks
    others is OlderSchemaError."""
    current = 0
    try:
        with _references_unenforced(db), _one_transaction(db):
            current = applied_version(db)
            if current > len(STEPS):
                raise NewerSchemaError(current, len(STEPS))
            if not upgrade and 0 < current < len(STEPS):
                raise OlderSchemaError(current, len(STEPS))
            for version, step in enumerate(STEPS[current:], start=current + 1):
                try:
                    step(db)
                except PeeweeDatabaseError as error:
                    raise MigrationFailedError(current, version, step.__name__.strip("_")
                                               .replace("_", " "), str(error)) from error
                SchemaVersion.create(version=version, applied_at=time.time_ns() // 1000)
            _raise_session_counter(db)
    except _CommitFailedError as failed:
        cause = failed.__cause__ or failed
        if current >= len(STEPS):  # no step ran: the error is the start's own
            raise cause from None
        raise MigrationFailedError(
            current, len(STEPS), f"committing steps {current + 1} to {len(STEPS)}",
            str(cause)) from cause
    return SCHEMA_VERSION


class _CommitFailedError(Exception):
    """COMMIT failed (its error is the cause): the steps ran, and nothing of them is stored."""


@contextlib.contextmanager
def _one_transaction(db: PeeweeDatabase) -> Iterator[None]:
    """`db.atomic()`, keeping the first error. On SQLite a full disk ends the transaction by
    itself: a statement or the COMMIT fails with "database or disk is full" and SQLite rolls
    back. peewee's `atomic()` then sends ROLLBACK all the same, which fails with "cannot
    rollback - no transaction is active" and replaces the real error, though the database is
    intact at its old version. Here ROLLBACK is sent only to a transaction still open, and a
    failed COMMIT is `_CommitFailedError`, so that `migrate` names it. Within a caller's
    transaction (PostgreSQL's migration lock) the steps run in a savepoint, as before."""
    if not isinstance(db, SqliteDatabase) or db.transaction_depth():
        with db.atomic():
            yield
        return
    # IMMEDIATE: the write lock first, waiting for it as long as the busy timeout says. A
    # deferred transaction read, and its first write then failed at once ("database is
    # locked", SQLITE_BUSY_SNAPSHOT, which no wait cures) whenever another connection had
    # committed meanwhile: `shellexec token` failed so while a bridge recorded.
    db.begin("IMMEDIATE")
    db.push_transaction(db.transaction())  # steps' own atomic() become savepoints
    try:
        yield
    except BaseException:
        db.pop_transaction()  # type: ignore[no-untyped-call]
        _roll_back_if_open(db)
        raise
    db.pop_transaction()  # type: ignore[no-untyped-call]
    try:
        db.commit()
    except PeeweeDatabaseError as error:
        _roll_back_if_open(db)
        raise _CommitFailedError from error


def _roll_back_if_open(db: PeeweeDatabase) -> None:
    """ROLLBACK, unless SQLite already ended the transaction (a full disk, an I/O error); a
    failing ROLLBACK never hides the error that made it needed."""
    connection = db.connection()  # type: ignore[no-untyped-call]
    if connection.in_transaction:
        with contextlib.suppress(PeeweeDatabaseError):
            db.rollback()


def _raise_session_counter(db: PeeweeDatabase) -> None:
    """Raises the session counter to the highest session number in use, on every start.
    A shellexec from before the check of newer schemas (2026-12-01) runs on a migrated
    database, numbers its sessions without the counter, and left every later CreateSession
    of this version failing on a number already taken; the next start heals that."""
    highest = Session.select(fn.COALESCE(fn.MAX(Session.number), 0)).scalar()
    SessionCounter.update(highest_number=highest).where(
        (SessionCounter.id == SESSION_COUNTER_ROW)
        & (SessionCounter.highest_number < highest)).execute()


@contextlib.contextmanager
def _references_unenforced(db: PeeweeDatabase) -> Iterator[None]:
    """On SQLite, foreign keys go unenforced while the steps run, as SQLite prescribes for a
    rebuilt table: dropping the old table would otherwise delete every row that refers to it
    (ON DELETE CASCADE). SQLite switches this only outside a transaction, hence around it. No
    step deletes rows, so none relies on a cascade; a rebuilt table keeps every row's key, so
    every reference to it still holds. PostgreSQL needs none of it."""
    if not isinstance(db, SqliteDatabase):
        yield
        return
    db.pragma("foreign_keys", 0)
    try:
        yield
    finally:
        db.pragma("foreign_keys", 1)

"""Pages and replay batches are bounded by the bytes of their messages, weighed by the store
before any text is read (ADR 0133): a read of long commands holds its bound, not its count,
in memory, and a replay batch reads and projects each message once however many of its
events carry it. Every write keeps a message's `text_bytes` equal to what its texts weigh;
migration step 12 counts it for older rows, and step 13 lays their table out as a new
database has it (ADR 0137). In-process, on both engines."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from peewee import Database, PostgresqlDatabase
from playhouse.test_utils import count_queries

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.feed import FeedEvent
from shellexec.projection.weight import message_weight
from shellexec.rules.limits import (
    MAX_PAGE_BYTES,
    MAX_STORED_TEXT_BYTES,
    REPLAY_BATCH_BYTES,
    REPLAY_BATCH_EVENTS,
)
from shellexec.store import nul_text, open_database, queries
from shellexec.store.migrations import SCHEMA_VERSION, applied_version
from shellexec.store.models import (
    MESSAGE_TEXTS,
    Event,
    Message,
    OutputChunk,
    SchemaVersion,
    utf8_bytes,
)

from support.acp import agent_text, codex_delta, codex_start

# Kept to its first 256 KiB in each of the message's content, title and command.
LONG_COMMAND = "echo " + "x" * 300_000
LONG_COMMANDS = 9


@pytest.fixture
def url(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> str:
    return new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'weighed.db'}")


@pytest.fixture
def app(url: str) -> Iterator[Composition]:
    composed = compose(Settings(database_url=url))
    yield composed
    composed.close()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def session_of_long_commands(app: Composition, command: str = LONG_COMMAND) -> str:
    async def fill() -> str:
        session = await app.sessions.create("task-weighed", "codex")
        for index in range(LONG_COMMANDS):
            await app.publisher.publish(session.id, codex_start(f"c{index}", command), None)
        return session.id

    return str(run(fill()))


def replay(app: Composition, session_id: str) -> list[list[FeedEvent]]:
    """The batches a relay reads, from revision 0 to the end of the log."""
    batches: list[list[FeedEvent]] = []
    after = 0
    while events := run(app.reader.logged_events(session_id, after)):
        batches.append(events)
        after = events[-1].revision
    return batches


def weight_of_first(app: Composition, session_id: str) -> int:
    """The weight the store gives the session's first message."""
    [text_bytes] = run(app.database.read(
        lambda: queries.page_weights(session_id, 1, descending=False)))
    return message_weight(text_bytes)


def test_a_replay_of_long_commands_reads_about_a_megabyte_at_a_time(app: Composition) -> None:
    session_id = session_of_long_commands(app)
    batches = replay(app, session_id)
    assert [event.revision for batch in batches for event in batch] == list(
        range(1, LONG_COMMANDS + 1))
    per_batch = max(1, REPLAY_BATCH_BYTES // weight_of_first(app, session_id))
    assert [len(batch) for batch in batches[:-1]] == [per_batch] * (len(batches) - 1)
    assert len(batches) > 1


def test_the_events_of_one_message_share_one_view_and_weigh_it_once(app: Composition) -> None:
    async def fill() -> str:
        session = await app.sessions.create("task-one-message", "codex")
        await app.publisher.publish(session.id, codex_start("c", LONG_COMMAND), None)
        for index in range(REPLAY_BATCH_EVENTS + 20):
            await app.publisher.publish(session.id, codex_delta("c", f"line {index}\n"), None)
        return session.id

    session_id = run(fill())
    first = run(app.reader.logged_events(session_id, 0))
    assert len(first) == REPLAY_BATCH_EVENTS  # a long message weighs once, not 100 times
    assert len({id(event.message) for event in first}) == 1


def summary_reads(app: Composition, read: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """What `read` returns, and the queries that read summary rows (they alone select
    `state_version`; the weighing queries select only positions and lengths)."""
    with count_queries() as counter:  # peewee's query log, which every thread writes to
        result = run(read)
    found = [(str(record.msg[0]), record.msg[1]) for record in counter.get_queries()]
    return result, [(sql, params) for sql, params in found if "state_version" in sql]


def test_a_page_of_long_commands_reads_only_the_rows_it_returns(app: Composition) -> None:
    session_id = session_of_long_commands(app)
    page, reads = summary_reads(app, app.reader.list_messages(session_id, 500, "", "", False))
    assert page.has_more
    assert 0 < len(page.messages) < LONG_COMMANDS
    assert len(page.messages) * 3 * MAX_STORED_TEXT_BYTES <= MAX_PAGE_BYTES
    [(_, (_, limit))] = reads  # the session's id and the page's size
    assert limit == len(page.messages)


def test_a_replay_reads_only_the_rows_its_batch_returns(app: Composition) -> None:
    session_id = session_of_long_commands(app)
    events, reads = summary_reads(app, app.reader.logged_events(session_id, 0))
    [(_, positions)] = reads
    assert len(positions) == len(events) < LONG_COMMANDS


def test_a_text_that_starts_with_nul_weighs_all_of_its_bytes(app: Composition) -> None:
    # SQLite's length() of a text stops at its first NUL: a page weighed by it would read
    # every one of these whole.
    session_id = session_of_long_commands(app, "\x00" + LONG_COMMAND)
    [text_bytes] = run(app.database.read(
        lambda: queries.page_weights(session_id, 1, descending=False)))
    assert text_bytes >= 3 * (MAX_STORED_TEXT_BYTES - 4)
    [first] = run(app.database.read(
        lambda: queries.page_of_messages(session_id, 1, descending=False)))
    assert run(app.database.read(lambda: queries.text_bytes_at([first.position]))) == {
        first.position: text_bytes}
    page = run(app.reader.list_messages(session_id, 500, "", "", False))
    assert page.has_more
    assert len(page.messages) < LONG_COMMANDS


def weighed(app: Composition) -> dict[str, tuple[int, int]]:
    """Each message's `text_bytes`, and the bytes its texts take as stored, counted here."""
    stored = nul_text.escape if url_is_postgres(app) else str  # PostgreSQL escapes NUL

    def rows() -> list[Message]:
        return list(Message.select(Message.id, Message.text_bytes,
                                   *(getattr(Message, name) for name in MESSAGE_TEXTS)))

    return {str(row.id): (int(row.text_bytes), sum(
        utf8_bytes(stored(getattr(row, name))) for name in MESSAGE_TEXTS))
        for row in run(app.database.read(rows))}


def url_is_postgres(app: Composition) -> bool:
    return isinstance(app.database.db, PostgresqlDatabase)


def test_every_write_keeps_text_bytes_equal_to_what_the_texts_weigh(app: Composition) -> None:
    async def fill() -> None:
        session = await app.sessions.create("task-text-bytes", "claude")
        publish = functools.partial(app.publisher.publish, session.id)
        await publish(agent_text("héllo \x00 wörld "), None)
        await publish(agent_text("und weiter " * 50), None)  # the chat message grows
        # A call announced without its command, which a later update names.
        await publish({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Terminal",
                       "kind": "execute", "status": "pending", "rawInput": {}}, None)
        await publish({"sessionUpdate": "tool_call_update", "toolCallId": "t",
                       "title": "ls ✓", "rawInput": {"command": "ls ✓ \U0001F600"}}, None)
        await publish(codex_start("long", "\x00" + LONG_COMMAND, work_dir="/wörk"), None)
        await publish(codex_delta("long", "out\n"), None)

    run(fill())
    found = weighed(app)
    assert len(found) == 3
    assert all(kept == now > 0 for kept, now in found.values()), found


def test_an_older_database_counts_text_bytes_when_it_upgrades(url: str) -> None:
    app = compose(Settings(database_url=url))
    try:
        session_id = session_of_long_commands(app, "\x00" + LONG_COMMAND)
        run(app.publisher.publish(session_id, agent_text("chat ✓"), None))
        run(app.publisher.publish(session_id, codex_delta("c0", "out\n"), None))
        declared = run(app.database.read(lambda: table_layout(app.database.db)))
        held = run(app.database.read(lambda: rows_held(session_id)))
    finally:
        app.close()
    older = open_database(url)
    older.db.connect(reuse_if_open=True)
    with older.db.atomic():
        older.db.execute_sql(  # type: ignore[no-untyped-call]  # peewee is untyped
            "ALTER TABLE message DROP COLUMN text_bytes")
        SchemaVersion.delete().where(SchemaVersion.version >= 12).execute()
    older.close()

    upgraded = compose(Settings(database_url=url))
    try:
        found = weighed(upgraded)
        version = run(upgraded.database.read(lambda: applied_version(upgraded.database.db)))
        layout = run(upgraded.database.read(lambda: table_layout(upgraded.database.db)))
        assert run(upgraded.database.read(lambda: rows_held(session_id))) == held
        # Output still refers to its message, in the table now called `message`: a new chunk
        # is stored (its reference checked), and no row refers to a missing one.
        run(upgraded.publisher.publish(session_id, codex_delta("c0", "more\n"), None))
        after = run(upgraded.database.read(lambda: rows_held(session_id)))
        references = run(upgraded.database.read(lambda: broken_references(upgraded.database.db)))
    finally:
        upgraded.close()
    assert version == SCHEMA_VERSION
    assert len(found) == LONG_COMMANDS + 1
    assert all(kept == now > 0 for kept, now in found.values()), found
    # Step 13 laid the table out as a new database has it: `text_bytes` before the texts
    # (SQLite; PostgreSQL keeps long texts out of the row) and NOT NULL.
    assert layout == declared
    messages, chunks, events = held
    assert (messages, chunks > 0, events > 0) == (LONG_COMMANDS + 1, True, True)
    assert after == (messages, chunks + 1, events + 1)
    assert references == []


def table_layout(db: Database, table: str = "message") -> list[str]:
    """A table's columns in their order, each with whether it may be null (PostgreSQL: sorted
    by name, since their order does not matter there), and on SQLite its CREATE statements,
    indexes included."""
    columns = [f"{column.name} null={column.null}" for column in db.get_columns(table)]
    if isinstance(db, PostgresqlDatabase):
        return sorted(columns)
    schema = db.execute_sql(  # type: ignore[no-untyped-call]  # peewee is untyped
        "SELECT sql FROM sqlite_master WHERE tbl_name = ? ORDER BY name", (table,)).fetchall()
    return [*columns, *(str(row[0]) for row in schema)]


def broken_references(db: Database) -> list[tuple[Any, ...]]:
    """SQLite's foreign key check (rows that refer to missing rows), and the tables the output
    chunks refer to when they are not `message` alone; nothing on PostgreSQL, which never
    lets a reference break."""
    if isinstance(db, PostgresqlDatabase):
        return []
    broken = db.execute_sql("PRAGMA foreign_key_check").fetchall()  # type: ignore[no-untyped-call]
    parents = {reference.dest_table for reference in db.get_foreign_keys("output_chunk")}
    return [*broken, *([("output_chunk refers to", parents)] if parents != {"message"} else [])]


def rows_held(session_id: str) -> tuple[int, int, int]:
    """How many messages, output chunks and feed events the session has."""
    positions = Message.select(Message.position).where(Message.session == session_id)
    return (Message.select().where(Message.session == session_id).count(),
            OutputChunk.select().where(OutputChunk.message.in_(positions)).count(),
            Event.select().where(Event.message.in_(positions)).count())

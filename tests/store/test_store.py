"""Store invariants, pinned in-process on a real SQLite file: list, boot state and feed read no
bodies; appending a delta adds a chunk row instead of rewriting the body; a failing unit of
work in a commit group undoes only itself; request ids are forgotten after their window; an
older database upgrades."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from peewee import SqliteDatabase
from playhouse.test_utils import count_queries

from shellexec import normalize
from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.normalize import MAX_FIELD_BYTES
from shellexec.projection import Masking
from shellexec.service import AlreadyExistsError, Clock, NotFoundError, system_clock
from shellexec.service.sessions import REQUEST_ID_WINDOW
from shellexec.service.stateless import normalize_updates
from shellexec.store import Statements, queries
from shellexec.store.compaction import COMPACT_AT_BYTES
from shellexec.store.migrations import SCHEMA_VERSION, STEPS, applied_version, migrate
from shellexec.store.models import (
    ALL_MODELS,
    Message,
    OutputChunk,
    SchemaVersion,
    Session,
    SessionRequest,
    TurnRequest,
)
from shellexec.vocabulary import REASON_SEQUENCE_CONFLICT

from support.acp import agent_text, codex_delta, codex_end, codex_start
from support.clock import SettableClock


class Harness:
    """The use cases over the database at `path`, wired as the server wires them."""

    def __init__(self, path: Path, clock: Clock = system_clock) -> None:
        app = compose(Settings(database_url=f"sqlite:///{path}", heartbeat_seconds=0.2,
                               stream_lifetime_seconds=1), clock)
        self.database = app.database
        self.sessions = app.sessions
        self.publisher = app.publisher
        self.reader = app.reader

    def run(self, coroutine: Any) -> Any:
        return asyncio.run(coroutine)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    opened = Harness(tmp_path / "store.db")
    yield opened
    opened.database.close()


def _session_with_outputs(harness: Harness, count: int, output_bytes: int) -> str:
    async def fill() -> str:
        session = await harness.sessions.create("task-list", "codex")
        for index in range(count):
            await harness.publisher.publish(session.id, codex_start(f"c{index}", "cat"), None)
            await harness.publisher.publish(
                session.id, codex_end(f"c{index}", "z" * output_bytes, 0), None)
        return session.id

    return str(harness.run(fill()))


def _queries_of_list(harness: Harness, session_id: str) -> list[str]:
    with count_queries() as counter:  # peewee's query log, which every thread writes to
        harness.run(harness.reader.list_messages(session_id, 100, "", "", False))
    return [str(record.msg[0]) for record in counter.get_queries()]


def test_listing_reads_the_same_queries_whether_outputs_are_empty_or_large(
        harness: Harness) -> None:
    empty = _session_with_outputs(harness, 5, 0)
    large = _session_with_outputs(harness, 5, 200_000)
    empty_queries = _queries_of_list(harness, empty)
    large_queries = _queries_of_list(harness, large)
    assert empty_queries == large_queries
    assert not any("output_chunk" in sql for sql in large_queries)
    assert not any("fold_state" in sql for sql in large_queries)


def test_appending_a_delta_inserts_one_chunk_row_and_keeps_the_others(
        harness: Harness) -> None:
    async def scenario() -> tuple[str, list[int], list[int]]:
        session = await harness.sessions.create("task-append", "codex")
        await harness.publisher.publish(session.id, codex_start("a", "tail"), None)
        await harness.publisher.publish(session.id, codex_delta("a", "one\n"), None)
        before = await harness.database.read(
            lambda: [c.id for c in OutputChunk.select(OutputChunk.id)])
        await harness.publisher.publish(session.id, codex_delta("a", "two\n"), None)
        after = await harness.database.read(
            lambda: [c.id for c in OutputChunk.select(OutputChunk.id)])
        return session.id, before, after

    _, before, after = harness.run(scenario())
    assert after[: len(before)] == before
    assert len(after) == len(before) + 1


def _in_one_group(harness: Harness, *publishes: Any) -> list[Any]:
    """Runs the writes concurrently: made in one loop iteration, they commit as one group."""

    async def scenario() -> list[Any]:
        return list(await asyncio.gather(*publishes, return_exceptions=True))

    return list(harness.run(scenario()))


def test_client_error_in_a_commit_group_leaves_the_others_committed_together(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    session_id = harness.run(harness.sessions.create("task-group", "codex")).id
    reruns: list[object] = []
    original = harness.database._run_alone

    async def counted(connection: Any, job: Any) -> Any:
        reruns.append(job)
        return await original(connection, job)

    monkeypatch.setattr(harness.database, "_run_alone", counted)
    sizes: list[int] = []
    run_group = harness.database._run_group

    async def measured(group: list[Any]) -> Any:
        sizes.append(len(group))
        return await run_group(group)

    monkeypatch.setattr(harness.database, "_run_group", measured)
    results = _in_one_group(
        harness,
        harness.publisher.publish(session_id, codex_start("ok1", "ls"), None),
        harness.publisher.publish("ses_missing", codex_start("bad", "ls"), None),
        harness.publisher.publish(session_id, codex_start("ok2", "pwd"), None))
    assert isinstance(results[1], NotFoundError)
    assert sizes == [3], "the three concurrent publishes commit as one group"
    assert reruns == [], "a client error must not roll the group back"
    page = harness.run(harness.reader.list_messages(session_id, 10, "", "", False))
    assert sorted(m.content for m in page.messages) == ["ls", "pwd"]


def test_unexpected_failure_in_a_commit_group_reruns_the_others_alone(
        harness: Harness) -> None:
    session_id = harness.run(harness.sessions.create("task-crash", "codex")).id

    def crash() -> None:
        raise RuntimeError("simulated storage failure")

    results = _in_one_group(
        harness,
        harness.publisher.publish(session_id, codex_start("a", "ls"), None),
        harness.database.write(crash),
        harness.publisher.publish(session_id, codex_start("b", "pwd"), None))
    assert isinstance(results[1], RuntimeError)
    page = harness.run(harness.reader.list_messages(session_id, 10, "", "", False))
    assert sorted(m.content for m in page.messages) == ["ls", "pwd"]
    revisions = harness.run(harness.database.read(
        lambda: [head.revision for head in queries.event_heads_after(session_id, 0, 10)]))
    assert revisions == [1, 2], "revisions stay gapless after the group was re-run"
    assert harness.run(harness.sessions.get(session_id)).revision == 2


def test_a_fault_of_the_group_s_own_code_fails_its_writes_and_the_next_group_runs(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the code that runs a group (not in a unit of work) must reach the group's
    callers: the PostgreSQL writer's set of held sessions once changed size while it was
    iterated, and its callers waited for ever."""
    session_id = harness.run(harness.sessions.create("task-fault", "codex")).id
    run_group = harness.database._run_group

    async def faulty(group: list[Any]) -> Any:
        raise RuntimeError("a fault of the group's code")

    async def both() -> list[Any]:
        return list(await asyncio.wait_for(asyncio.gather(
            harness.publisher.publish(session_id, codex_start("a", "ls"), None),
            harness.publisher.publish(session_id, codex_start("b", "pwd"), None),
            return_exceptions=True), timeout=30))

    monkeypatch.setattr(harness.database, "_run_group", faulty)
    results = harness.run(both())
    assert [str(result) for result in results] == ["a fault of the group's code"] * 2
    monkeypatch.setattr(harness.database, "_run_group", run_group)
    harness.run(harness.publisher.publish(session_id, codex_start("c", "id"), None))
    page = harness.run(harness.reader.list_messages(session_id, 10, "", "", False))
    assert [m.content for m in page.messages] == ["id"]


def test_migrations_record_the_schema_version(harness: Harness) -> None:
    version = harness.run(harness.database.read(lambda: applied_version(harness.database.db)))
    assert version == SCHEMA_VERSION


def test_a_write_by_another_writer_is_noticed_and_nothing_is_lost(
        harness: Harness, tmp_path: Path) -> None:
    session_id = harness.run(harness.sessions.create("task-two-writers", "codex")).id
    harness.run(harness.publisher.publish(session_id, codex_start("w", "x"), None))
    harness.run(harness.publisher.publish(session_id, codex_delta("w", "one\n"), None))
    # Another process appends output behind this process's cache.
    with sqlite3.connect(tmp_path / "store.db") as other:
        position = other.execute("SELECT position FROM message").fetchone()[0]
        other.execute("INSERT INTO output_chunk (message_position, stream, data) "
                      "VALUES (?, 'stdout', 'two\n')", (position,))
        other.execute("UPDATE message SET state_version = state_version + 1")
    harness.run(harness.publisher.publish(session_id, codex_delta("w", "three\n"), None))

    page = harness.run(harness.reader.list_messages(session_id, 10, "", "", False))
    shell_output = harness.run(harness.reader.shell_output(session_id, page.messages[0].id))
    assert shell_output.output.stdout == "one\ntwo\nthree\n"
    revisions = harness.run(harness.database.read(
        lambda: [head.revision for head in queries.event_heads_after(session_id, 0, 10)]))
    assert revisions == [1, 2, 3]


def _remembered(harness: Harness) -> tuple[list[str], list[str]]:
    """The remembered (session request ids, turn ids of remembered turn requests)."""
    remembered: tuple[list[str], list[str]] = harness.run(harness.database.read(lambda: (
        [str(row.request_id) for row in SessionRequest.select()],
        [str(row.turn_id) for row in TurnRequest.select()])))
    return remembered


def test_request_ids_are_remembered_for_the_window_then_forgotten(tmp_path: Path) -> None:
    clock = SettableClock(1_000_000_000_000)
    harness = Harness(tmp_path / "window.db", clock)
    try:
        created = harness.run(harness.sessions.create("task-window", "codex", "create-1"))
        turn = harness.run(harness.sessions.start_turn(created.id, "start-1"))
        harness.run(harness.sessions.complete_turn(created.id, turn.id, "end_turn"))

        clock.now += REQUEST_ID_WINDOW
        assert harness.run(harness.sessions.create("task-window", "codex", "create-1")).id == (
            created.id)
        assert harness.run(harness.sessions.start_turn(created.id, "start-1")).id == turn.id

        clock.now += 1
        recreated = harness.run(harness.sessions.create("task-window", "codex", "create-1"))
        restarted = harness.run(harness.sessions.start_turn(created.id, "start-1"))
        assert recreated.id != created.id
        assert restarted.id != turn.id
        # The expired rows were deleted when the new ones were written.
        assert _remembered(harness) == (["create-1"], [restarted.id])
    finally:
        harness.database.close()


def _bound(path: Path) -> SqliteDatabase:
    """The SQLite file at `path`, with foreign keys enforced and the models bound to it."""
    db = SqliteDatabase(str(path), pragmas={"foreign_keys": 1})
    db.bind(ALL_MODELS)
    return db


def test_a_version_1_database_upgrades_and_keeps_its_sessions(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = _bound(path)
    with old.atomic():  # what the first release did to a new database
        applied_version(old)
        STEPS[0](old)
        SchemaVersion.create(version=1, applied_at=0)
        Statements(old).ensure_task("task-old", 1)
        # A row of step 1's tables: the counter that numbers sessions comes with step 11.
        Session.insert(id="ses_old", task="task-old", agent="codex", number=1, created_at=1,
                       updated_at=1).execute()
    assert not old.table_exists("session_request")
    old.close()

    harness = Harness(path)
    database = harness.database
    try:
        assert harness.run(database.read(lambda: applied_version(database.db))) == SCHEMA_VERSION
        turn = harness.run(harness.sessions.start_turn("ses_old", "start-old"))
        assert harness.run(harness.sessions.start_turn("ses_old", "start-old")).id == turn.id
        assert harness.run(harness.sessions.get("ses_old")).current_turn_id == turn.id
        created = harness.run(harness.sessions.create("task-new", "codex")).id
        assert harness.run(database.read(lambda: queries.session_number(created))) == 2
    finally:
        database.close()


def _version_2_database(path: Path) -> None:
    """A database as the release before migration steps 3 and 4 left it, with one session that has
    three feed events and two publish receipts."""
    old = sqlite3.connect(path)
    old.executescript((Path(__file__).parent / "schema_v2.sql").read_text())
    old.executescript("""
        INSERT INTO schema_version VALUES (1, 0), (2, 0);
        INSERT INTO task VALUES ('task-v2', 'idle', 1, 1);
        INSERT INTO session VALUES ('ses_v2', 'task-v2', 'codex', 'idle', 1, 1);
        INSERT INTO message (position, id, session_id, task_id, turn_id, author_type, type,
            content, status, title, is_shell, command, work_dir, truncated, has_output,
            stdout_bytes, stderr_bytes, state_version, stdout_stored_bytes,
            stderr_stored_bytes, created_at, updated_at)
            VALUES (1, 'msg_v2', 'ses_v2', 'task-v2', '', 'agent', 'text', 'hi', '', '', 0,
                    '', '', 0, 0, 0, 0, 0, 0, 0, 1, 1);
        INSERT INTO event VALUES ('ses_v2', 1, 'message_added', 1),
                                 ('ses_v2', 2, 'message_updated', 1),
                                 ('ses_v2', 3, 'message_updated', 1);
        INSERT INTO publish_receipt VALUES ('ses_v2', 1, 1), ('ses_v2', 2, 1);
    """)
    old.commit()
    old.close()


def _schema(path: Path) -> dict[str, str]:
    """Every table's and index's CREATE statement in the SQLite file at `path`, by name."""
    with sqlite3.connect(path) as connection:
        schema = dict(connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    connection.close()
    return schema


def test_a_version_2_database_upgrades_to_the_smaller_layout_and_keeps_its_feed(
        tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    _version_2_database(path)
    harness = Harness(path)
    try:
        session = harness.run(harness.sessions.get("ses_v2"))
        assert session.revision == 3
        page = harness.run(harness.reader.list_messages("ses_v2", 10, "", "", descending=False))
        assert [message.id for message in page.messages] == ["msg_v2"]
        replayed = harness.run(harness.publisher.publish("ses_v2", agent_text("again"), 2))
        assert replayed.duplicate
        events = harness.run(harness.reader.logged_events("ses_v2", 0))
        assert [(event.revision, event.type) for event in events] == [
            (1, "message_added"), (2, "message_updated"), (3, "message_updated")]
        assert {event.message.id for event in events if event.message} == {"msg_v2"}
        harness.run(harness.publisher.publish("ses_v2", agent_text(" more"), 3))
        assert harness.run(harness.sessions.get("ses_v2")).revision == 4
    finally:
        harness.database.close()
    schema = _schema(path)
    assert not set(schema) & {"event_session_id", "publishreceipt_session_id",
                              "message_session_id", "outputchunk_message_position"}
    assert "WITHOUT ROWID" in schema["event"]
    assert "WITHOUT ROWID" in schema["publish_receipt"]
    assert "event_v2" not in schema
    assert "message_rebuilt" not in schema


def test_an_upgraded_database_is_laid_out_exactly_as_a_new_one(tmp_path: Path) -> None:
    """Every step that changed a table left what a new database has: the same columns in the
    same order, the same constraints, the same indexes (ADR 0137)."""
    _version_2_database(tmp_path / "v2.db")
    for path in (tmp_path / "v2.db", tmp_path / "new.db"):
        Harness(path).database.close()
    assert _schema(tmp_path / "v2.db") == _schema(tmp_path / "new.db")


def test_a_rebuild_inside_a_caller_s_transaction_is_refused_and_loses_nothing(
        tmp_path: Path) -> None:
    """SQLite turns foreign keys off only outside a transaction: inside one, dropping the old
    message table would delete every chunk that refers to it (ON DELETE CASCADE)."""
    path = tmp_path / "store.db"
    _message_table_as_step_12_left_it(path)

    db = _bound(path)
    try:
        with pytest.raises(RuntimeError, match="foreign keys off"), db.atomic():
            migrate(db)
        assert OutputChunk.select().count() == 1
        assert applied_version(db) == 12
        migrate(db)  # outside a transaction, as the server runs it
        assert OutputChunk.select().count() == 1
        assert applied_version(db) == SCHEMA_VERSION
    finally:
        db.close()


def test_a_rebuild_gives_a_column_the_old_table_lacks_and_keeps_the_rest(
        tmp_path: Path) -> None:
    """A column a later step adds (here `exit_code`, nullable as such columns are) is not in
    the table step 13 copies: the rebuilt table has it, empty, and every other column."""
    path = tmp_path / "store.db"
    _message_table_as_step_12_left_it(path, without="exit_code")
    db = _bound(path)
    try:
        migrate(db)
        rows = list(Message.select(Message.command, Message.exit_code, Message.text_bytes))
    finally:
        db.close()
    assert [(row.command, row.exit_code, row.text_bytes > 0) for row in rows] == [
        ("ls", None, True)]


def _message_table_as_step_12_left_it(path: Path, without: str = "") -> None:
    """A database with one command and its output whose message table has `text_bytes` at
    its end and nullable, as step 12 added it, and lacks the column `without`."""
    harness = Harness(path)
    try:
        session_id = harness.run(harness.sessions.create("task-rebuild", "codex")).id
        harness.run(harness.publisher.publish(session_id, codex_start("c", "ls"), None))
        harness.run(harness.publisher.publish(session_id, codex_delta("c", "out\n"), None))
    finally:
        harness.database.close()
    with sqlite3.connect(path) as older:
        older.execute("ALTER TABLE message DROP COLUMN text_bytes")
        older.execute("ALTER TABLE message ADD COLUMN text_bytes INTEGER")
        older.execute("UPDATE message SET text_bytes = length(CAST(command AS BLOB))")
        if without:
            older.execute(f"ALTER TABLE message DROP COLUMN {without}")
        older.execute("DELETE FROM schema_version WHERE version >= 13")
    older.close()


def test_the_revision_keeps_increasing_after_the_events_are_pruned(tmp_path: Path) -> None:
    path = tmp_path / "pruned.db"
    harness = Harness(path)
    try:
        session_id = harness.run(harness.sessions.create("task-pruned", "codex")).id
        for index in range(3):
            harness.run(harness.publisher.publish(session_id, agent_text(f"part {index}"), None))
    finally:
        harness.database.close()
    with sqlite3.connect(path) as pruning:  # what feed compaction will do
        pruning.execute("DELETE FROM event")
    pruning.close()

    reopened = Harness(path)  # a new process remembers no revision
    try:
        assert reopened.run(reopened.sessions.get(session_id)).revision == 3
        reopened.run(reopened.publisher.publish(session_id, agent_text(" and on"), None))
        events = reopened.run(reopened.reader.logged_events(session_id, 0))
        assert [event.revision for event in events] == [4]
        assert reopened.run(reopened.sessions.get(session_id)).revision == 4
    finally:
        reopened.database.close()


def test_receipts_from_before_payload_digests_stay_duplicates_and_new_ones_conflict(
        tmp_path: Path) -> None:
    path = tmp_path / "before-digests.db"
    _version_2_database(path)  # its receipts were written without a digest
    harness = Harness(path)
    try:
        publish = harness.publisher.publish
        assert harness.run(publish("ses_v2", agent_text("any update"), 1)).duplicate
        assert not harness.run(publish("ses_v2", agent_text("first"), 5)).duplicate
        assert harness.run(publish("ses_v2", agent_text("first"), 5)).duplicate
        with pytest.raises(AlreadyExistsError) as conflict:
            harness.run(publish("ses_v2", agent_text("second"), 5))
        assert conflict.value.reason == REASON_SEQUENCE_CONFLICT
        page = harness.run(harness.reader.list_messages("ses_v2", 10, "", "", False))
        assert [m.content for m in page.messages] == ["hi", "first"]
    finally:
        harness.database.close()


def _traced_writes(harness: Harness, statements: list[str]) -> None:
    """Records every statement the write connection runs from now on."""
    harness.run(harness.database.write(
        lambda: harness.database.db.connection()  # type: ignore[no-untyped-call]
        .set_trace_callback(statements.append)))


def test_the_first_update_of_a_tool_call_inserts_its_row_once_with_every_column(
        harness: Harness) -> None:
    session_id = harness.run(harness.sessions.create("task-insert", "codex")).id
    start = codex_start("i", "ls")
    start["_meta"] = {**start["_meta"], "terminal_output": {"terminal_id": "i", "data": "a\n"}}
    executed: list[str] = []
    _traced_writes(harness, executed)
    published = harness.run(harness.publisher.publish(session_id, start, None)).message

    writes = [sql.split("(")[0].strip() for sql in executed
              if sql.startswith(("INSERT", "UPDATE", "DELETE"))]
    # The call names its terminal in `content`: one link row (ADR 0086). A new command adds
    # to the session's command count (ADR 0091); then the revision and the activity time in
    # one statement. Later updates of the command write the count only when its result turns
    # to or from failure.
    assert writes[:5] == ['INSERT INTO "message"', 'INSERT INTO "output_chunk"',
                          'UPDATE "session" SET "command_count" =', 'INSERT INTO "terminal_link"',
                          'INSERT INTO "event"']
    assert len(writes) == 6
    assert writes[5].startswith('UPDATE "session" SET "revision" = 1, "active_at" = ')
    page = harness.run(harness.reader.list_messages(session_id, 100, "", "", descending=False))
    assert page.messages == (published,)
    assert published.type == "tool_execute"
    assert published.shell_exec is not None
    assert published.shell_exec.command == "ls"
    assert published.shell_exec.output.stdout_bytes == 2


def test_units_of_work_write_only_through_the_compiled_statements(harness: Harness) -> None:
    async def scenario() -> None:
        session = await harness.sessions.create("task-one-path", "codex", "create-once")
        turn = await harness.sessions.start_turn(session.id, "start-once")
        await harness.publisher.publish(session.id, agent_text("Running it."), 1)
        await harness.publisher.publish(session.id, agent_text(" Now."), 2)
        await harness.publisher.publish(session.id, codex_start("p", "make"), 3)
        await harness.publisher.publish(session.id, codex_delta("p", "cc\n"), 4)
        await harness.sessions.complete_turn(session.id, turn.id, "cancelled")

    # count_queries sees what peewee's models execute; Statements run on the connection.
    with count_queries() as counter:
        harness.run(scenario())
    orm_writes = [str(record.msg[0]) for record in counter.get_queries()
                  if not str(record.msg[0]).startswith("SELECT")]
    assert orm_writes == []


def test_a_shell_output_past_the_bound_but_not_compacted_reads_as_the_fold_keeps_it(
        harness: Harness) -> None:
    session_id = harness.run(harness.sessions.create("task-bound", "codex")).id
    # 8 deltas of about 40 KB of 2-, 3- and 4-byte characters: past the 256 KiB bound, below
    # the compaction threshold, with the cut falling inside a character.
    updates = [codex_start("b", "cat big.log"),
               *(codex_delta("b", f"{index}:" + "é€😀" * 4_400 + "\n") for index in range(8))]
    for update in updates:
        published = harness.run(harness.publisher.publish(session_id, update, None)).message
    assert published is not None
    assert published.shell_exec is not None
    stored = harness.run(harness.database.read(
        lambda: queries.get_message_row(int(queries.message_position(
            session_id, published.id) or 0)).stdout_stored_bytes))
    assert MAX_FIELD_BYTES < stored <= COMPACT_AT_BYTES, "the chunks are not compacted yet"

    shell_output = harness.run(harness.reader.shell_output(session_id, published.id))
    expected = normalize_updates(updates, "codex", Masking()).output
    assert shell_output.output == expected
    assert expected.truncated
    assert normalize.summarize(shell_output.output) == published.shell_exec.output


def test_compaction_deletes_the_oldest_chunks_and_rewrites_none(harness: Harness) -> None:
    session_id = harness.run(harness.sessions.create("task-compact", "codex")).id
    delta_bytes = 16 * 1024
    count = COMPACT_AT_BYTES // delta_bytes + 8  # past the threshold, then some more
    updates = [codex_start("k", "tail -f log"),
               *(codex_delta("k", f"{index:06d}" + "x" * (delta_bytes - 7) + "\n")
                 for index in range(count))]
    for update in updates:
        published = harness.run(harness.publisher.publish(session_id, update, None)).message
    assert published is not None

    def chunks() -> list[tuple[int | None, int]]:
        position = int(queries.message_position(session_id, published.id) or 0)
        return [(chunk.text_bytes, len(chunk.packed or b""))
                for chunk in OutputChunk.select(OutputChunk.text_bytes, OutputChunk.packed)
                .where(OutputChunk.message == position).order_by(OutputChunk.id)]

    stored = harness.run(harness.database.read(chunks))
    sizes = [size or 0 for size, _ in stored]
    assert MAX_FIELD_BYTES <= sum(sizes) <= COMPACT_AT_BYTES
    assert set(sizes) == {delta_bytes}, "the kept chunks are the deltas as they came"
    assert all(0 < packed < delta_bytes // 8 for _, packed in stored), "packed, counted unpacked"
    shell_output = harness.run(harness.reader.shell_output(session_id, published.id))
    assert shell_output.output == normalize_updates(updates, "codex", Masking()).output

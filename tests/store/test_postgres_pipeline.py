"""On PostgreSQL a write transaction sends its statements through a pipeline (ADR 0138): they
go out without waiting for each result. What must hold all the same: a message update that
finds its row changed by another writer commits nothing, however late its row count is read;
a statement the server refuses fails its own unit only (whether the driver or the unit itself
notices first), and the others of its group commit; row counts are read once they arrive.
In-process, on the run's PostgreSQL server."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg import pq
from store.test_weighed_reads import run

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.store import postgres, queries
from shellexec.store.errors import DatabaseUnavailableError
from shellexec.store.models import ALL_MODELS, Event, Message, OutputChunk, PublishReceipt

from support.acp import codex_delta, codex_start


@pytest.fixture
def app(postgres_url: str) -> Iterator[Composition]:
    composed = compose(Settings(database_url=postgres_url))
    yield composed
    composed.close()


def _revisions(app: Composition, session_id: str) -> list[int]:
    return [int(head.revision) for head in run(app.database.read(
        lambda: queries.event_heads_after(session_id, 0, 100)))]


def test_a_unit_of_work_sends_its_statements_through_a_pipeline(app: Composition) -> None:
    def pipeline_status() -> pq.PipelineStatus:
        connection: psycopg.Connection[Any] = app.database.db.connection()  # type: ignore[no-untyped-call]
        return pq.PipelineStatus(connection.pgconn.pipeline_status)

    assert run(app.database.write(pipeline_status)) == pq.PipelineStatus.ON


def test_a_message_changed_by_another_writer_is_written_again_on_what_it_holds(
        app: Composition, postgres_url: str) -> None:
    session_id = run(app.sessions.create("task-pipelined", "codex")).id
    run(app.publisher.publish(session_id, codex_start("w", "x"), None))
    run(app.publisher.publish(session_id, codex_delta("w", "one\n"), None))
    # Another writer appends output behind this replica's cache without moving the
    # session's revision, so the replica still trusts what it remembers of the row: its next
    # update is checked only by the row's version, read after the statement was sent.
    with psycopg.connect(postgres_url) as other:
        (position,) = other.execute("SELECT position FROM message").fetchall()[0]
        other.execute("INSERT INTO output_chunk (message_position, stream, data) "
                      "VALUES (%s, 'stdout', 'two\n')", (position,))
        other.execute("UPDATE message SET state_version = state_version + 1, "
                      "stdout_stored_bytes = stdout_stored_bytes + 4")
    run(app.publisher.publish(session_id, codex_delta("w", "three\n"), None))

    page = run(app.reader.list_messages(session_id, 10, "", "", False))
    shell_output = run(app.reader.shell_output(session_id, page.messages[0].id))
    assert shell_output.output.stdout == "one\ntwo\nthree\n"
    stored = run(app.database.read(lambda: Message.get_by_id(position)))
    assert stored.stdout_stored_bytes == len("one\ntwo\nthree\n"), (
        "the update was written on the row as the other writer left it")
    assert stored.state_version == 4, "created, one, the other writer's, three"
    assert _revisions(app, session_id) == [1, 2, 3]


class UnitBugError(Exception):
    """A unit of work that fails in Python, before the server's refusal is reported."""


# The unit hears of the refusal where it next reads, or at any later statement if the result
# is in by then: one that fails in Python may fail either way.
@pytest.mark.parametrize(("ends_with", "expected"), [
    ("a read", (psycopg.errors.UniqueViolation,)),
    ("an exception", (psycopg.errors.UniqueViolation, UnitBugError))])
def test_a_statement_the_server_refuses_fails_its_unit_and_the_group_commits_the_rest(
        app: Composition, caplog: pytest.LogCaptureFixture, ends_with: str,
        expected: tuple[type[Exception], ...]) -> None:
    session_id = run(app.sessions.create("task-refused", "codex")).id
    run(app.publisher.publish(session_id, codex_start("first", "ls"), None))
    statements = app.database.statements

    def duplicate_event(statements_after: int) -> Callable[[], None]:
        def unit() -> None:
            # Revision 1 is logged already: the primary key refuses it, but the pipeline
            # reports that only once a later result is waited for, and the server skips what
            # was sent in between. How much the driver has read of that when the unit fails
            # depends on timing, so the test tries several lengths.
            statements.insert_event(session_id, 1, "message_changed", 0, 0)
            for _ in range(statements_after):
                statements.count_commands(session_id, 0, 0)
            if ends_with == "an exception":
                raise UnitBugError
            statements.session_facts(session_id)
        return unit

    async def one_group(statements_after: int) -> list[Any]:
        return list(await asyncio.gather(
            app.publisher.publish(session_id, codex_start(f"b{statements_after}", "pwd"), None),
            app.database.write(duplicate_event(statements_after), session_id),
            app.publisher.publish(session_id, codex_start(f"c{statements_after}", "id"), None),
            return_exceptions=True))

    with caplog.at_level(logging.WARNING, logger="psycopg"):
        groups = [run(one_group(statements_after)) for statements_after in range(8)]

    for before, refused, after in groups:
        assert isinstance(refused, expected)
        assert not isinstance(before, BaseException)
        assert not isinstance(after, BaseException)
    page = run(app.reader.list_messages(session_id, 100, "", "", False))
    assert len(page.messages) == 1 + 2 * len(groups)
    assert _revisions(app, session_id) == list(range(1, 2 + 2 * len(groups))), (
        "revisions stay gapless")
    assert [record.getMessage() for record in caplog.records] == [], (
        "the pipeline ends without a warning of the driver's")


def test_row_counts_are_read_once_the_pipeline_has_them(app: Composition) -> None:
    """Pruning and deleting report how many rows went, by table (the pruned-rows metric):
    through a pipeline those counts arrive after the statements were sent."""
    session_id = run(app.sessions.create("task-counted", "codex", request_id="create-1")).id
    run(app.sessions.start_turn(session_id, "turn-1"))
    for sequence, update in enumerate((codex_start("c", "ls"), codex_delta("c", "one\n"),
                                       codex_delta("c", "two\n")), start=1):
        run(app.publisher.publish(session_id, update, sequence))
    statements = app.database.statements
    stored = run(app.database.read(lambda: {
        model._meta.table_name: model.select().count()
        for model in ALL_MODELS}))
    assert stored[Event._meta.table_name] > 2
    assert stored[PublishReceipt._meta.table_name] == 3
    assert stored[OutputChunk._meta.table_name] == 2

    pruned_events = run(app.database.write(
        lambda: statements.prune_events(session_id, 2), session_id))
    pruned_receipts = run(app.database.write(
        lambda: statements.prune_receipts(session_id, 2**62), session_id))
    deleted = run(app.database.write(
        lambda: statements.delete_session(session_id, "task-counted", 0), session_id))

    assert (pruned_events, pruned_receipts) == (2, 3)
    # The run's only session: every row of the tables it reports on was the session's.
    left = {**stored, Event._meta.table_name: stored[Event._meta.table_name] - 2,
            PublishReceipt._meta.table_name: 0}
    assert deleted == {table: left[table] for table in deleted}
    assert {"session", "turn", "message", "output_chunk", "event"} <= set(deleted)


def test_a_connection_that_fails_once_commit_is_sent_stores_each_unit_once_and_says_unavailable(
        app: Composition, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver can fail as it leaves the pipeline after the server committed (a probe
    terminating backends saw `cannot exit pipeline mode while busy` with the connection not
    yet marked broken). The units must not run again alone: unsequenced chunks were stored
    twice, and a turn completed twice refused the next start. Their callers hear UNAVAILABLE:
    whether the write was stored is unknown."""
    session_id = run(app.sessions.create("task-commit-unknown", "codex")).id
    turn = run(app.sessions.start_turn(session_id, ""))
    leave_pipeline = psycopg.Pipeline.__exit__
    failures = [psycopg.OperationalError("cannot exit pipeline mode while busy")]

    def commit_then_fail(self: psycopg.Pipeline, *exc_info: Any) -> None:
        leave_pipeline(self, *exc_info)  # the transaction commits
        if failures and exc_info[0] is None:
            raise failures.pop()

    def chunk(text: str) -> dict[str, Any]:
        return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text",
                                                                    "text": text}}

    async def one_group() -> list[Any]:
        return list(await asyncio.gather(
            app.publisher.publish(session_id, chunk("one "), None),
            app.publisher.publish(session_id, chunk("two "), None),
            return_exceptions=True))

    watcher = app.feed.subscribe(session_id)
    monkeypatch.setattr(psycopg.Pipeline, "__exit__", commit_then_fail)
    answers = run(one_group())
    monkeypatch.undo()

    assert failures == [], "the failure was raised"
    for answer in answers:
        assert isinstance(answer, DatabaseUnavailableError)
        assert "whether the write was stored is unknown" in str(answer)
    # What was committed was announced to no watcher: they are sent back to the log.
    assert watcher.lagged
    app.feed.unsubscribe(session_id, watcher)
    # Stored once each, by the one commit; the next write works on a new connection.
    run(app.publisher.publish(session_id, chunk("three"), None))
    page = run(app.reader.list_messages(session_id, 10, "", "", False))
    assert [message.content for message in page.messages] == ["one two three"]
    assert _revisions(app, session_id) == [1, 2, 3, 4], "the turn, one, two, three"
    run(app.sessions.complete_turn(session_id, turn.id, "end_turn"))


@pytest.fixture
def quick_lock_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "WRITE_LOCK_TIMEOUT_SECONDS", 0.3)


class FrozenReplica:
    """A replica stopped inside its write transaction, holding `session`'s rows: it has
    sent its statements and synced them (so the database counts it idle), and neither sends
    more nor commits until `resume`."""

    def __init__(self, app: Composition, session_id: str) -> None:
        self._inside = threading.Event()
        self._resume = threading.Event()

        def stop_inside_the_transaction() -> None:
            app.database.statements.session_facts(session_id)
            app.database.statements.verify()  # a sync: the server waits, idle
            self._inside.set()
            self._resume.wait(30)

        self._thread = threading.Thread(target=lambda: _try(lambda: run(
            app.database.write(stop_inside_the_transaction, session_id))))
        self._thread.start()
        assert self._inside.wait(10)

    def resume(self) -> None:
        self._resume.set()
        self._thread.join(30)


def _lock_waits(app: Composition) -> list[int]:
    """Counts the write transactions of `app` that waited out the lock timeout."""
    waits = [0]
    transaction = app.database._transaction  # type: ignore[attr-defined]

    def counted(*args: Any) -> Any:
        try:
            return transaction(*args)
        except psycopg.errors.LockNotAvailable:
            waits[0] += 1
            raise

    app.database._transaction = counted  # type: ignore[attr-defined]
    return waits


def test_a_replica_stopped_inside_a_transaction_delays_other_sessions_once(
        quick_lock_timeout: None, postgres_url: str) -> None:
    """A replica frozen (SIGSTOP) while its transaction held a session's rows stopped every
    write of the other replicas for as long as it stayed frozen: each replica has one
    writer, and a group waits for all of its sessions. The rows are now waited for at most
    the lock timeout, once: the session's other units fail at once, and later groups ask
    whether it is still held without waiting (NOWAIT) until it is free. (The first unit of
    the held session, run again alone after its group, waited the timeout a second time: a
    probe's writes to every session stalled 10 s, not 5.)"""
    frozen = compose(Settings(database_url=postgres_url))
    healthy = compose(Settings(database_url=postgres_url))
    try:
        held = run(healthy.sessions.create("task-held", "codex")).id
        free = run(healthy.sessions.create("task-free", "codex")).id
        waits = _lock_waits(healthy)
        replica = FrozenReplica(frozen, held)

        async def publish_all(calls: list[tuple[str, str]]) -> list[Any]:
            return list(await asyncio.gather(*(
                healthy.publisher.publish(session, codex_start(call, "ls"), None)
                for session, call in calls), return_exceptions=True))

        for round_ in ("first", "second"):
            *on_held, on_free = run(publish_all(
                [*((held, f"{round_}-{n}") for n in range(4)), (free, round_)]))
            for answer in on_held:
                assert isinstance(answer, DatabaseUnavailableError), answer
                assert "did not end in 300ms" in str(answer)
            assert not isinstance(on_free, BaseException), on_free
        # The group waited; no unit waited again.
        assert waits[0] == 1

        replica.resume()
        assert not isinstance(_try(lambda: run(healthy.publisher.publish(
            held, codex_start("after", "ls"), None))), BaseException)
        assert waits[0] == 1
    finally:
        replica.resume()
        frozen.close()
        healthy.close()


def test_a_session_another_transaction_holds_briefly_is_not_taken_for_held(
        quick_lock_timeout: None, postgres_url: str) -> None:
    """Once a group has waited the lock timeout, each of its sessions is asked for its rows.
    Asked without waiting, a session whose rows a healthy transaction held for a moment (a
    write through another replica) was taken for held, and its publish refused."""
    frozen = compose(Settings(database_url=postgres_url))
    healthy = compose(Settings(database_url=postgres_url))
    try:
        held = run(healthy.sessions.create("task-held", "codex")).id
        busy = run(healthy.sessions.create("task-busy", "codex")).id
        replica = FrozenReplica(frozen, held)
        with psycopg.connect(postgres_url) as other:  # another replica's short transaction
            other.execute("SELECT id FROM session WHERE id = %s FOR UPDATE", (busy,))
            [[xid]] = other.execute("SELECT pg_current_xact_id()::text").fetchall()
            released = threading.Thread(target=_commit_once_waited_for,
                                        args=(postgres_url, other, xid))
            released.start()

            async def both() -> list[Any]:
                return list(await asyncio.gather(
                    healthy.publisher.publish(held, codex_start("h", "ls"), None),
                    healthy.publisher.publish(busy, codex_start("b", "ls"), None),
                    return_exceptions=True))

            on_held, on_busy = run(both())
            released.join(30)
        assert isinstance(on_held, DatabaseUnavailableError), on_held
        assert not isinstance(on_busy, BaseException), on_busy
    finally:
        replica.resume()
        frozen.close()
        healthy.close()


def _commit_once_waited_for(url: str, holder: psycopg.Connection[Any], xid: str) -> None:
    """Commits `holder`'s transaction (id `xid`) once another transaction waits for it."""
    deadline = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as watcher:
        while not watcher.execute(
                "SELECT 1 FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted "
                "AND transactionid::text = %s", (xid,)).fetchall():
            assert time.monotonic() < deadline, "nothing waited for the short transaction"
            time.sleep(0.02)
    holder.commit()


def test_the_database_ends_a_write_transaction_idle_past_the_idle_timeout(
        quick_lock_timeout: None, monkeypatch: pytest.MonkeyPatch, postgres_url: str) -> None:
    """A replica stopped for good (a paused machine, a network cut that leaves its
    connection open) would hold its rows until TCP gave up, which takes hours."""
    monkeypatch.setattr(postgres, "WRITE_IDLE_TIMEOUT_SECONDS", 1.0)
    frozen = compose(Settings(database_url=postgres_url))
    healthy = compose(Settings(database_url=postgres_url))
    try:
        held = run(healthy.sessions.create("task-held", "codex")).id
        replica = FrozenReplica(frozen, held)
        deadline = time.monotonic() + 20
        while isinstance(answer := _try(lambda: run(healthy.publisher.publish(
                held, codex_start("h", "ls"), None))), DatabaseUnavailableError):
            assert time.monotonic() < deadline, "the held rows were never released"
        assert not isinstance(answer, BaseException), answer
    finally:
        replica.resume()
        frozen.close()
        healthy.close()


def _try(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as error:
        return error

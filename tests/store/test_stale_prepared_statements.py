"""A replica's prepared statements outlive a migration another replica ran. psycopg prepares a
statement once a connection has run it five times; after a rolling upgrade's step altered the
type of a column the statement returns, PostgreSQL refuses it on that connection for good
("cached plan must not change result type", `FeatureNotSupported`), and every read that
reached it answered INTERNAL. The connection is now dropped and the work runs once more on a
new one, as after a connection lost in a restart: reads and writes succeed. In-process, on a
database of the test's own on the run's PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from store.test_weighed_reads import run

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.store import postgres
from shellexec.store.database import Job, Outcome

from support.acp import codex_delta, codex_start

# More runs than psycopg's prepare_threshold (5): every statement of a publish and of a
# listing is prepared on the writer's and the reader's connections.
_PREPARED_AFTER = 10


@pytest.fixture
def app(postgres_url: str) -> Iterator[Composition]:
    # One reader connection: every read runs on the one that prepared the statements.
    composed = compose(Settings(database_url=postgres_url, database_pool_size=2))
    yield composed
    composed.close()


def _listed(app: Composition, session_id: str) -> list[Any]:
    return list(run(app.reader.list_messages(session_id, 10, "", "", False)).messages)


def test_statements_prepared_before_a_column_type_changed_are_prepared_anew(
        app: Composition, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    session_id = run(app.sessions.create("task-stale", "codex")).id
    run(app.publisher.publish(session_id, codex_start("c1", "make"), 1))
    for sequence in range(2, 2 + _PREPARED_AFTER):
        run(app.publisher.publish(session_id, codex_delta("c1", f"{sequence}\n"), sequence))
        assert len(_listed(app, session_id)) == 1

    # Another replica's migration: types of columns that the listing (the session's agent,
    # a message's title) and a publish (its receipt's message position) read.
    with psycopg.connect(postgres_url, autocommit=True) as other:
        other.execute("ALTER TABLE session ALTER COLUMN agent TYPE varchar(300)")
        other.execute("ALTER TABLE message ALTER COLUMN title TYPE varchar(5000)")
        other.execute("ALTER TABLE publish_receipt ALTER COLUMN message_position TYPE bigint")

    alone: list[Job] = []
    run_alone = postgres.PostgresDatabase._alone

    def counted(database: postgres.PostgresDatabase, job: Job) -> Outcome:
        alone.append(job)
        return run_alone(database, job)

    monkeypatch.setattr(postgres.PostgresDatabase, "_alone", counted)

    (message,) = _listed(app, session_id)
    assert message.title == "make"
    stored = run(app.publisher.publish(session_id, codex_delta("c1", "after\n"), 50))
    assert not stored.duplicate
    assert alone == [], "the group ran again on a new connection, not unit by unit"
    assert run(app.publisher.publish(session_id, codex_delta("c1", "after\n"), 50)).duplicate
    output = run(app.reader.shell_output(session_id, message.id)).output
    assert output.stdout == "".join(f"{sequence}\n" for sequence in
                                    range(2, 2 + _PREPARED_AFTER)) + "after\n"


def test_a_stale_statement_is_known_by_the_function_that_refuses_it(postgres_url: str) -> None:
    """What `_stale_plan` recognizes, from PostgreSQL itself (psycopg's and peewee's errors)."""
    with psycopg.connect(postgres_url, autocommit=True, prepare_threshold=0) as connection:
        connection.execute("CREATE TABLE probe (x varchar(10))")
        connection.execute("SELECT x FROM probe").fetchall()
        with psycopg.connect(postgres_url, autocommit=True) as other:
            other.execute("ALTER TABLE probe ALTER COLUMN x TYPE varchar(20)")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as refused:
            connection.execute("SELECT x FROM probe")
    assert postgres._stale_plan(refused.value)
    assert not postgres._stale_plan(psycopg.errors.FeatureNotSupported("another feature"))

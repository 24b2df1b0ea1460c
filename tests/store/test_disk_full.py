"""A write that finds the disk full is told as such. A probe filled the disk under a running
server: every publish answered INTERNAL, and the call log named only sqlite3's
OperationalError, raised on the committer thread (`concurrent/futures/thread.py ... in run`).
SQLite had stored nothing, and the write passes once space is freed, so the store now raises
`DatabaseFullError` (a `DatabaseUnavailableError`: the interceptor answers UNAVAILABLE, which
callers retry). The file is made full by `PRAGMA max_page_count` on the writer's connection.
In-process; the pragma is SQLite's, and PostgreSQL's own disk-full error is raised by a unit
of work instead."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from store.test_weighed_reads import run

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.store import DatabaseFullError, DatabaseUnavailableError
from shellexec.store.opening import open_database

from support.acp import codex_delta, codex_start
from support.postgres import PostgresServer
from support.texts import random_text

# SQLite's own bound: the pragma set back to it lifts the limit.
_NO_LIMIT = 1_073_741_823


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Composition]:
    composed = compose(Settings(database_url=f"sqlite:///{tmp_path / 'db.sqlite'}"))
    yield composed
    composed.close()


def _limit_pages(app: Composition, extra: int) -> None:
    """Lets the writer's file grow by `extra` pages from its current size."""
    db: Any = app.database.db

    def limit() -> None:
        pages = db.execute_sql("PRAGMA page_count").fetchone()[0]
        db.execute_sql(f"PRAGMA max_page_count = {pages + extra}")

    run(app.database.write(limit))


def _lift_limit(app: Composition) -> None:
    db: Any = app.database.db
    run(app.database.write(lambda: db.execute_sql(f"PRAGMA max_page_count = {_NO_LIMIT}")))


@pytest.mark.sqlite_only
def test_a_publish_that_finds_the_disk_full_stores_nothing_and_says_so(
        app: Composition, caplog: pytest.LogCaptureFixture) -> None:
    session_id = run(app.sessions.create("task-full", "codex")).id
    run(app.publisher.publish(session_id, codex_start("c1", "make"), 1))
    _limit_pages(app, 4)
    text = random_text(200_000)
    large = codex_delta("c1", text)  # packed, still about 165 pages of 1 KiB

    with caplog.at_level(logging.WARNING, logger="shellexec.store.database"):
        for _ in range(2):  # told the same each time, and logged once
            with pytest.raises(DatabaseFullError) as failed:
                run(app.publisher.publish(session_id, large, 2))
    assert isinstance(failed.value, DatabaseUnavailableError)  # the interceptor's UNAVAILABLE
    assert not failed.value.outcome_unknown
    assert str(failed.value) == ("the database's disk is full, so nothing was stored; retry "
                                 "once space is freed")
    assert [record.getMessage() for record in caplog.records] == [
        "the database's disk is full: writes are answered UNAVAILABLE, and store nothing, "
        "until space is freed"]

    _lift_limit(app)  # space freed: the retry of the same sequence is stored, once
    assert not run(app.publisher.publish(session_id, large, 2)).duplicate
    message = run(app.reader.list_messages(session_id, 10, "", "", False)).messages[0]
    output = run(app.reader.shell_output(session_id, message.id)).output
    assert output.stdout == text


def test_postgresql_s_disk_full_is_told_as_such(postgres_server: PostgresServer) -> None:
    """PostgreSQL's own "could not extend file" (`DiskFull`, SQLSTATE 53100) answered
    INTERNAL. A statement raising it stored nothing, as on SQLite; it is DatabaseFullError."""
    database = open_database(postgres_server.new_database(), readers=1)

    def no_room() -> None:
        raise psycopg.errors.DiskFull("could not extend file: No space left on device")

    async def writes() -> tuple[BaseException | None, int]:
        failed = None
        try:
            await database.write(no_room)
        except DatabaseUnavailableError as error:
            failed = error
        return failed, await database.write(lambda: 1)

    try:
        failed, after = asyncio.run(writes())
    finally:
        database.close()
    assert isinstance(failed, DatabaseFullError)
    assert isinstance(failed.__cause__, psycopg.errors.DiskFull)
    assert after == 1

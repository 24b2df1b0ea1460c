"""An upgraded database's `session` table is laid out as a new database's (migration step 14,
ADR 0137): the columns earlier steps added as nullable become NOT NULL, and every session,
and everything that refers to one, is kept. In-process, on both engines."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from peewee import Database, PostgresqlDatabase
from store.test_weighed_reads import run, table_layout

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.store import queries
from shellexec.store.migrations import SCHEMA_VERSION, applied_version
from shellexec.store.models import Message, Session, Turn

from support.acp import codex_delta, codex_start

# What steps 5, 6 and 9 added to an existing `session` table, nullable.
ADDED_COLUMNS = ("number", "revision", "compacted_revision", "active_at", "command_count",
                 "failure_count")


@pytest.fixture
def url(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> str:
    return new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'layout.db'}")


def _fill(app: Composition) -> str:
    async def fill() -> str:
        session = await app.sessions.create("task-layout", "codex", request_id="create-1")
        await app.sessions.start_turn(session.id, "turn-1")
        await app.publisher.publish(session.id, codex_start("c", "false"), 1)
        await app.publisher.publish(session.id, codex_delta("c", "out\n"), 2)
        return session.id

    return str(run(fill()))


def _held(session_id: str) -> tuple[Any, ...]:
    """What is stored of the session and under it."""
    session = Session.get_by_id(session_id)
    return (tuple(getattr(session, column) for column in ("task_id", "agent", *ADDED_COLUMNS)),
            Message.select().where(Message.session == session_id).count(),
            Turn.select().where(Turn.session == session_id).count(),
            queries.session_number(session_id))


def _broken_references(db: Database) -> list[Any]:
    """SQLite's foreign key check, and any reference to a table that is not there; nothing on
    PostgreSQL, which never lets a reference break."""
    if isinstance(db, PostgresqlDatabase):
        return []
    broken: list[Any] = list(db.execute_sql(  # type: ignore[no-untyped-call]
        "PRAGMA foreign_key_check").fetchall())
    tables = set(db.get_tables())
    return broken + [(table, reference.dest_table) for table in tables
                     for reference in db.get_foreign_keys(table)
                     if reference.dest_table not in tables]


def _as_before_step_14(url: str) -> None:
    """Gives the database's `session` table the nullable columns an upgraded one had until
    step 14, with its rows and indexes, and forgets that step."""
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:///")
        with sqlite3.connect(path) as older:
            older.execute("PRAGMA foreign_keys = OFF")
            (create,) = older.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'session'").fetchone()
            indexes = [sql for (sql,) in older.execute(
                "SELECT sql FROM sqlite_master WHERE tbl_name = 'session' AND type = 'index' "
                "AND sql IS NOT NULL")]
            for column in ADDED_COLUMNS:
                create = re.sub(rf'"{column}" INTEGER NOT NULL', f'"{column}" INTEGER', create)
            # Built aside and renamed, as a rebuild is: renaming `session` itself would make
            # the other tables refer to the name it moved to.
            older.execute(create.replace('CREATE TABLE "session"', 'CREATE TABLE "older"', 1))
            older.execute("INSERT INTO older SELECT * FROM session")
            older.execute("DROP TABLE session")
            older.execute("ALTER TABLE older RENAME TO session")
            for index in indexes:
                older.execute(index)
            older.execute("DELETE FROM schema_version WHERE version >= 14")
        older.close()
        return
    with psycopg.connect(url) as server:
        for column in ADDED_COLUMNS:
            server.execute(f"ALTER TABLE session ALTER COLUMN {column} DROP NOT NULL")
        server.execute("DELETE FROM schema_version WHERE version >= 14")


def test_an_upgraded_session_table_is_laid_out_as_a_new_one_and_keeps_its_rows(
        url: str) -> None:
    app = compose(Settings(database_url=url))
    try:
        session_id = _fill(app)
        declared = run(app.database.read(lambda: table_layout(app.database.db, "session")))
        held = run(app.database.read(lambda: _held(session_id)))
    finally:
        app.close()
    _as_before_step_14(url)

    upgraded = compose(Settings(database_url=url))
    try:
        database = upgraded.database
        version = run(database.read(lambda: applied_version(database.db)))
        layout = run(database.read(lambda: table_layout(database.db, "session")))
        kept = run(database.read(lambda: _held(session_id)))
        # The sessions' children still refer to them, and a new session and publish are
        # stored (their references checked).
        run(upgraded.publisher.publish(session_id, codex_delta("c", "more\n"), 3))
        created = run(upgraded.sessions.create("task-layout", "codex")).id
        references = run(database.read(lambda: _broken_references(database.db)))
        listed = run(upgraded.sessions.list_sessions(10, "", "", False))
    finally:
        upgraded.close()
    assert version == SCHEMA_VERSION
    assert layout == declared, "NOT NULL as in a new database"
    assert kept == held
    assert references == []
    assert {session.id for session in listed.sessions} == {session_id, created}

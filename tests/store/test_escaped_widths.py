"""PostgreSQL's bounded columns of agent-chosen text hold their values escaped: twice the
validated length (migration step 15 widens an older database's). In-process, on the run's
PostgreSQL server."""

from __future__ import annotations

from typing import Any

import psycopg
from store.test_weighed_reads import run

from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.rules.limits import MAX_TOOL_CALL_ID_CHARS
from shellexec.store.migrations import SCHEMA_VERSION, applied_version
from shellexec.store.models import ALL_MODELS, AgentChars

from support.acp import codex_end, codex_start
from support.postgres import PostgresServer


def _escaped_columns() -> list[tuple[str, str, int]]:
    """(table, column, validated length) of every bounded column of agent-chosen text."""
    found = []
    for model in ALL_MODELS:
        for field in model._meta.sorted_fields:
            chosen = getattr(field, "rel_field", field)  # a reference has its target's type
            if isinstance(chosen, AgentChars):
                found.append((model._meta.table_name, field.column_name, chosen.max_length))
    return found


def _widths(connection: psycopg.Connection[Any]) -> dict[tuple[str, str], int]:
    rows = connection.execute(
        "SELECT table_name, column_name, character_maximum_length "
        "FROM information_schema.columns WHERE table_schema = 'public'").fetchall()
    return {(table, column): width for table, column, width in rows}


def test_an_older_database_is_widened_for_escaped_text(postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    columns = _escaped_columns()
    with psycopg.connect(url) as older:
        new_widths = _widths(older)
        for table, column, length in columns:  # as every release before step 15 made them
            older.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE varchar({length})')
        older.execute("DELETE FROM schema_version WHERE version >= 15")

    app = compose(Settings(database_url=url))
    try:
        version = run(app.database.read(lambda: applied_version(app.database.db)))
        session_id = run(app.sessions.create("task-widened", "\x00" * 64)).id
        call_id = "\x00" * MAX_TOOL_CALL_ID_CHARS
        run(app.publisher.publish(session_id, codex_start(call_id, "ls"), None))
        run(app.publisher.publish(session_id, codex_end(call_id, "done\n", 0), None))
        page = run(app.reader.list_messages(session_id, 10, "", "", False))
    finally:
        app.close()
    with psycopg.connect(url) as upgraded:
        widths = _widths(upgraded)

    assert version == SCHEMA_VERSION
    assert {(table, column): widths[table, column] for table, column, _ in columns} == {
        (table, column): 2 * length for table, column, length in columns}
    assert widths == new_widths
    assert len(page.messages) == 1, "the call's end found its start by the escaped id"
    assert len(columns) >= 8

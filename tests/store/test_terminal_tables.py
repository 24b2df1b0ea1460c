"""Migration step 7: the terminal tables, added to a database that predates them (ADR 0086)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.store.migrations import SCHEMA_VERSION

TABLES = ("terminal_link", "held_terminal_update")


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def test_step_7_adds_the_terminal_tables_to_an_older_database(tmp_path: Path) -> None:
    path = tmp_path / "before-terminals.db"
    compose(Settings(database_url=f"sqlite:///{path}")).close()
    with sqlite3.connect(path) as db:  # as a database of step 6 was
        for table in TABLES:
            db.execute(f"DROP TABLE {table}")
        db.execute("DELETE FROM schema_version WHERE version >= 7")
    assert not set(TABLES) & _tables(path)

    compose(Settings(database_url=f"sqlite:///{path}")).close()
    assert set(TABLES) <= _tables(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT max(version) FROM schema_version").fetchone()[0] \
            == SCHEMA_VERSION

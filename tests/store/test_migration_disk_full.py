"""An upgrade that runs out of disk space says so. SQLite ends the transaction by itself when a
statement or the COMMIT finds no room ("database or disk is full", or an I/O error), and
peewee's `atomic()` then failed its own ROLLBACK: the server reported "cannot rollback - no
transaction is active" instead of the migration failure docs/operations.md ("Upgrading")
promises, though the database was intact at its old version. SQLite only (PostgreSQL's steps
run in a savepoint of the migration lock's transaction)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from peewee import Database as PeeweeDatabase
from peewee import SqliteDatabase

from shellexec.store import SCHEMA_VERSION, MigrationFailedError, migrations, open_database
from shellexec.store.models import ALL_MODELS

pytestmark = pytest.mark.sqlite_only

# Rows of 1 KiB, made by SQLite itself (no generate_series in Python's build).
_ROWS = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) "
         "SELECT randomblob(1024) FROM n")


def _out_of_room(db: PeeweeDatabase) -> None:
    """A step whose rows do not fit: the file may grow by 8 pages only. Each row is a
    statement of its own, which SQLite runs without a statement journal: when one finds no
    room, SQLite rolls back the whole transaction, not the statement alone."""
    db.execute_sql("CREATE TABLE made_by_the_step (x BLOB)")  # type: ignore[no-untyped-call]
    pages = db.execute_sql("PRAGMA page_count").fetchone()[0]  # type: ignore[no-untyped-call]
    db.execute_sql(f"PRAGMA max_page_count = {pages + 8}")  # type: ignore[no-untyped-call]
    for _ in range(200):
        db.execute_sql(  # type: ignore[no-untyped-call]
            "INSERT INTO made_by_the_step (x) VALUES (randomblob(1024))")


def _state(path: Path) -> tuple[int, list[str]]:
    """The schema version recorded in the file, and its tables."""
    db = SqliteDatabase(str(path))
    db.bind(ALL_MODELS)
    try:
        version = db.execute_sql(  # type: ignore[no-untyped-call]
            "SELECT MAX(version) FROM schema_version").fetchone()[0]
        return int(version), db.get_tables()
    finally:
        db.close()


def test_a_step_that_fills_the_file_names_itself_and_the_full_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "db.sqlite"
    open_database(f"sqlite:///{path}").close()
    monkeypatch.setattr(migrations, "STEPS", (*migrations.STEPS, _out_of_room))
    with pytest.raises(MigrationFailedError) as failed:
        open_database(f"sqlite:///{path}")
    assert str(failed.value) == (
        f"migrating the database failed at step {SCHEMA_VERSION + 1} (out of room) and was "
        f"rolled back; the database is as it was, at schema version {SCHEMA_VERSION}: "
        "database or disk is full")
    version, tables = _state(path)
    assert version == SCHEMA_VERSION
    assert "made_by_the_step" not in tables


# Run in a process of its own: RLIMIT_FSIZE holds for the whole process. The step's rows fit
# in the page cache, so they are first written, to the write-ahead log, by COMMIT.
_COMMIT_PAST_THE_LIMIT = """
import resource, signal, sys
from shellexec.store import StoreError, migrations, open_database

def _copied(db):
    db.execute_sql("CREATE TABLE made_by_the_step (x BLOB)")
    db.execute_sql("INSERT INTO made_by_the_step (x) " + {rows!r})

migrations.STEPS = (*migrations.STEPS, _copied)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1024 * 1024, 1024 * 1024))
try:
    open_database(sys.argv[1])
except StoreError as error:
    print(type(error).__name__, error)
"""


def test_a_commit_that_finds_no_room_names_the_steps_and_the_first_error(
        tmp_path: Path) -> None:
    """The probe's case: every step ran, and COMMIT could not write the log (a file-size
    limit here, a full tmpfs in the probe), after which SQLite had rolled back."""
    path = tmp_path / "db.sqlite"
    open_database(f"sqlite:///{path}").close()
    script = _COMMIT_PAST_THE_LIMIT.format(rows=_ROWS.format(count=2048))
    ran = subprocess.run([sys.executable, "-c", script, f"sqlite:///{path}"],
                         capture_output=True, text=True, timeout=120, check=False)
    step = SCHEMA_VERSION + 1
    assert ran.stdout.startswith(
        f"MigrationFailedError migrating the database failed at step {step} (committing "
        f"steps {step} to {step}) and was rolled back; the database is as it was, at schema "
        f"version {SCHEMA_VERSION}: "), ran.stdout + ran.stderr
    assert "cannot rollback" not in ran.stdout
    version, tables = _state(path)
    assert version == SCHEMA_VERSION
    assert "made_by_the_step" not in tables
    open_database(f"sqlite:///{path}").close()  # and the server starts on it as before

"""Whether the database the server was started on is there and fully migrated.

PostgreSQL: whether the server answers a fresh connection and the schema is migrated.

The check opens a connection of its own, read-only, to the file at the configured path: the
server's open connections keep working on a file that was moved or replaced under them, so
only a fresh open shows what a restarted server (or an operator) would find there.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from peewee import Database as PeeweeDatabase
from peewee import DatabaseError, PostgresqlDatabase, SqliteDatabase, fn

from shellexec.store.migrations import SCHEMA_VERSION
from shellexec.store.models import SchemaVersion


def _recorded_version(db: PeeweeDatabase) -> int:
    if not db.table_exists(SchemaVersion._meta.table_name):
        return 0
    latest = SchemaVersion.select(fn.MAX(SchemaVersion.version)).scalar(db)
    return int(latest or 0)


def readiness_problem(path: Path) -> str | None:
    """None when the database at `path` opens and has every migration applied, otherwise
    what is wrong with it. Blocking (file I/O): run it off the event loop."""
    if not path.is_file():
        return f"the database file {path} is missing"
    db = SqliteDatabase(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True,
                        autoconnect=False, pragmas=(("busy_timeout", 1000),))
    try:
        db.connect()
        version = _recorded_version(db)
    except DatabaseError as error:
        return f"the database {path} cannot be read ({type(error).__name__})"
    finally:
        db.close()
    if version != SCHEMA_VERSION:
        return f"the database {path} is at schema version {version}, not {SCHEMA_VERSION}"
    return None


def postgres_readiness_problem(db: PostgresqlDatabase) -> str | None:
    """None when the PostgreSQL database of `db` answers and has every migration applied,
    otherwise what is wrong with it. Blocking (a round trip): run it off the event loop.

    A connection of its own, opened and closed per check (thread-local to the checking
    thread): one left open would not show that the server restarted."""
    probe = PostgresqlDatabase(db.database, prefer_psycopg3=True, autoconnect=False,
                               **db.connect_params)
    try:
        probe.connect()
        version = _recorded_version(probe)
    except DatabaseError as error:
        return f"the database cannot be reached ({type(error).__name__})"
    finally:
        probe.close()
    if version != SCHEMA_VERSION:
        return f"the database is at schema version {version}, not {SCHEMA_VERSION}"
    return None

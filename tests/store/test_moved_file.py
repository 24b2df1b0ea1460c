"""An operator moves the SQLite file away for a moment (a backup script, a mistaken `mv`)
while the server runs. A reader connection opened meanwhile made a new, empty database at
the path; SQLite then took the real database's write-ahead log into it, and acknowledged
writes were lost with it. No connection opened after the file was made may create it, and
one that cannot open it says the database is unavailable (UNAVAILABLE, retry)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shellexec.store.database import open_sqlite
from shellexec.store.errors import DatabaseUnavailableError
from shellexec.store.models import SchemaVersion

pytestmark = pytest.mark.sqlite_only


def _versions() -> int:
    return SchemaVersion.select().count()


def _written() -> int:
    return int(SchemaVersion.update(applied_at=SchemaVersion.applied_at).execute())


def test_a_connection_opened_while_the_file_is_away_creates_no_database(tmp_path: Path
                                                                        ) -> None:
    path = tmp_path / "shellexec.db"
    database = open_sqlite(f"sqlite:///{path}", readers=2)
    try:
        versions = asyncio.run(database.write(_versions))
        assert versions > 0
        asyncio.run(database.write(_written))  # a write the WAL holds, not yet checkpointed
        away = path.rename(tmp_path / "away.db")

        # A reader connects for the first time; the call may be retried once the file is back.
        with pytest.raises(DatabaseUnavailableError, match="unable to open database file"):
            asyncio.run(database.read(_versions))
        assert not path.exists(), "a connection made a new database at the path"

        away.rename(path)
        assert asyncio.run(database.read(_versions)) == versions
    finally:
        database.close()
    reopened = open_sqlite(f"sqlite:///{path}", readers=1)
    try:
        assert asyncio.run(reopened.read(_versions)) == versions
    finally:
        reopened.close()

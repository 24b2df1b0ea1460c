"""How long the SQLite connections wait for a lock another program holds on the file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shellexec.app.settings import MAX_BUSY_TIMEOUT_MS, Settings
from shellexec.store import migrations
from shellexec.store.database import DEFAULT_BUSY_TIMEOUT_MS, open_sqlite


def test_the_setting_defaults_to_ten_seconds_and_takes_whole_milliseconds() -> None:
    assert Settings.from_env({}).db_busy_timeout_ms == DEFAULT_BUSY_TIMEOUT_MS == 10_000
    assert Settings.from_env({"SHELLEXEC_DB_BUSY_TIMEOUT_MS": " 250 "}).db_busy_timeout_ms == 250
    assert Settings.from_env({"SHELLEXEC_DB_BUSY_TIMEOUT_MS": "0"}).db_busy_timeout_ms == 0
    leading_zeros = "0" * 5000 + "7"
    assert Settings.from_env({"SHELLEXEC_DB_BUSY_TIMEOUT_MS": leading_zeros}
                             ).db_busy_timeout_ms == 7


@pytest.mark.parametrize("value", ["-1", "1.5", "1e3", "ten", "٣", str(MAX_BUSY_TIMEOUT_MS + 1),
                                   "1" + "0" * 5000])
def test_anything_else_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match="SHELLEXEC_DB_BUSY_TIMEOUT_MS must be a whole number"):
        Settings.from_env({"SHELLEXEC_DB_BUSY_TIMEOUT_MS": value})


@pytest.mark.sqlite_only
def test_the_writer_and_the_readers_wait_as_long_as_they_are_told(tmp_path: Path) -> None:
    database = open_sqlite(f"sqlite:///{tmp_path / 'shellexec.db'}", readers=1,
                           busy_timeout_ms=1234)

    def busy_timeout() -> object:
        return database.db.execute_sql(  # type: ignore[no-untyped-call]  # peewee is untyped
            "PRAGMA busy_timeout").fetchone()[0]

    async def both() -> tuple[object, object]:
        return await database.write(busy_timeout), await database.read(busy_timeout)

    try:
        assert asyncio.run(both()) == (1234, 1234)
    finally:
        database.close()


@pytest.mark.sqlite_only
@pytest.mark.parametrize("upgrade", [True, False], ids=["server", "token-command"])
def test_opening_takes_the_write_lock_first_so_a_commit_meanwhile_cannot_fail_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upgrade: bool) -> None:
    """`shellexec token list` failed at once with "database is locked" while a bridge
    recorded into the service: opening read the schema version in a deferred transaction,
    the service committed meanwhile, and the opening's own write (the session counter) could
    then not take the lock (SQLITE_BUSY_SNAPSHOT: no busy timeout waits that out). The
    opening takes the write lock first now, so the other connection's write waits instead."""
    path = tmp_path / "shellexec.db"
    open_sqlite(f"sqlite:///{path}", readers=1).close()
    read_version = migrations.applied_version
    other_write: list[str] = []

    def read_then_another_connection_writes(db: Any) -> int:
        version = read_version(db)
        other = sqlite3.connect(path, timeout=0)
        try:
            other.execute("UPDATE schema_version SET applied_at = applied_at + 1")
            other.commit()
            other_write.append("committed")
        except sqlite3.OperationalError as error:
            other_write.append(str(error))
        finally:
            other.close()
        return version

    monkeypatch.setattr(migrations, "applied_version", read_then_another_connection_writes)
    open_sqlite(f"sqlite:///{path}", readers=1, upgrade=upgrade).close()
    assert other_write == ["database is locked"]  # it waited for the opening, not the reverse

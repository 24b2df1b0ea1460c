"""How long the SQLite connections wait for a lock another program holds on the file."""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from shellexec.app.settings import MAX_BUSY_TIMEOUT_MS, Settings
from shellexec.store import DatabaseLockedError, DatabaseUnavailableError, migrations, tokens
from shellexec.store.database import (
    DEFAULT_BUSY_TIMEOUT_MS,
    PAGE_SIZE,
    WAL_SIZE_LIMIT_PAGES,
    Database,
    open_sqlite,
)
from shellexec.store.models import ApiToken


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


def _pragma(database: Database, name: str) -> Callable[[], object]:
    def value() -> object:
        return database.db.execute_sql(  # type: ignore[no-untyped-call]  # peewee is untyped
            f"PRAGMA {name}").fetchone()[0]
    return value


@pytest.mark.sqlite_only
def test_the_readers_wait_as_long_as_they_are_told_and_the_writer_never_on_the_loop(
        tmp_path: Path) -> None:
    """The writer's wait for the lock happens on the committer thread (below), so its own
    connection, on the loop, has SQLite's busy handler off."""
    database = open_sqlite(f"sqlite:///{tmp_path / 'shellexec.db'}", readers=1,
                           busy_timeout_ms=1234)
    busy_timeout = _pragma(database, "busy_timeout")

    async def both() -> tuple[object, object]:
        return await database.write(busy_timeout), await database.read(busy_timeout)

    try:
        assert asyncio.run(both()) == (0, 1234)
    finally:
        database.close()


@contextmanager
def _write_lock_held(path: Path) -> Iterator[sqlite3.Connection]:
    """Another program's connection holding the file's write lock (a `sqlite3` shell in a
    transaction) until the block ends or it commits."""
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield other
    finally:
        other.close()


@pytest.mark.sqlite_only
def test_a_write_waiting_for_another_program_s_lock_leaves_the_loop_serving(
        tmp_path: Path) -> None:
    """BEGIN waited for the lock in SQLite's busy handler on the loop: every call, liveness
    included, stopped for the busy timeout, twice (the group's wait, then each unit's)."""
    path = tmp_path / "shellexec.db"
    database = open_sqlite(f"sqlite:///{path}", readers=1, busy_timeout_ms=120_000)
    ran: list[str] = []

    async def scenario() -> object:
        with _write_lock_held(path) as other:
            writing = asyncio.ensure_future(database.write(lambda: ran.append("unit")))
            for _ in range(3):  # the leader runs, tries BEGIN, hands the wait over
                await asyncio.sleep(0)
            served = await database.read(_pragma(database, "user_version"))
            assert not writing.done(), writing
            other.commit()
            await writing
        return served

    try:
        assert asyncio.run(scenario()) is not None
        assert ran == ["unit"]
    finally:
        database.close()


@pytest.mark.sqlite_only
def test_a_group_that_never_got_the_lock_is_unavailable_and_ran_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "shellexec.db"
    database = open_sqlite(f"sqlite:///{path}", readers=1, busy_timeout_ms=10)
    ran: list[int] = []

    async def three_writes() -> list[BaseException | None]:
        outcomes = await asyncio.gather(
            *(database.write(functools.partial(ran.append, index)) for index in range(3)),
            return_exceptions=True)
        return [outcome if isinstance(outcome, BaseException) else None
                for outcome in outcomes]

    try:
        with _write_lock_held(path):
            errors = asyncio.run(three_writes())
        assert ran == []  # not run again one by one, each waiting once more
        assert all(isinstance(error, DatabaseLockedError) for error in errors), errors
        assert str(errors[0]) == ("the database is locked by another program (a write waits "
                                  "up to 10 ms for it); retry shortly")
        assert isinstance(errors[0], DatabaseUnavailableError)  # answered UNAVAILABLE
    finally:
        database.close()


@pytest.mark.sqlite_only
def test_a_wal_grown_while_a_reader_held_an_old_snapshot_is_cut_back(tmp_path: Path) -> None:
    """A long backup (a reader on an old snapshot) keeps checkpoints from ending the WAL,
    which grows past its usual 4 MiB; without a size limit it kept its peak for good, and
    `shellexec_database_bytes` with it."""
    path = tmp_path / "shellexec.db"
    wal = path.with_name(path.name + "-wal")
    database = open_sqlite(f"sqlite:///{path}", readers=1)
    blob = bytes(64 * 1024)

    def create() -> None:
        database.db.execute_sql("CREATE TABLE scratch (data BLOB)")  # type: ignore[no-untyped-call]

    def insert() -> None:
        database.db.execute_sql(  # type: ignore[no-untyped-call]
            "INSERT INTO scratch (data) VALUES (?)", (blob,))

    async def writes(count: int) -> None:
        for _ in range(count):
            await database.write(insert)

    try:
        asyncio.run(database.write(create))
        backup = sqlite3.connect(path, isolation_level=None)
        backup.execute("BEGIN")
        backup.execute("SELECT count(*) FROM scratch").fetchone()  # holds its snapshot
        asyncio.run(writes(3 * WAL_SIZE_LIMIT_PAGES * PAGE_SIZE // len(blob)))
        grown = wal.stat().st_size
        backup.execute("COMMIT")
        backup.execute("PRAGMA wal_checkpoint(PASSIVE)")  # nothing holds the old frames now
        backup.close()
        asyncio.run(writes(1))  # the WAL starts over, and is cut to its limit
        assert grown > 2 * WAL_SIZE_LIMIT_PAGES * PAGE_SIZE
        assert wal.stat().st_size <= WAL_SIZE_LIMIT_PAGES * PAGE_SIZE
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
        other_write.append(_another_program_writes(path))
        return version

    monkeypatch.setattr(migrations, "applied_version", read_then_another_connection_writes)
    open_sqlite(f"sqlite:///{path}", readers=1, upgrade=upgrade).close()
    assert other_write == ["database is locked"]  # it waited for the opening, not the reverse



@pytest.mark.sqlite_only
def test_a_new_token_takes_the_write_lock_before_it_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`shellexec token create` failed with "database is locked" in 4 of 15 runs while the
    service wrote (a review): it read in a deferred transaction, the service committed
    meanwhile, and its insert could then not take the lock (SQLITE_BUSY_SNAPSHOT)."""
    path = tmp_path / "shellexec.db"
    database = open_sqlite(f"sqlite:///{path}", readers=1)
    other_write: list[str] = []
    read_first = ApiToken.get_or_none

    def read_then_another_connection_writes(*args: Any) -> Any:
        found = read_first(*args)
        other_write.append(_another_program_writes(path))
        return found

    monkeypatch.setattr(ApiToken, "get_or_none", read_then_another_connection_writes)
    try:
        assert tokens.insert_token(database.db, "new", "hash-new", "read", "", 2)
    finally:
        database.close()
    assert other_write == ["database is locked"]  # it waited for the token, not the reverse


@pytest.mark.sqlite_only
def test_writes_made_while_a_write_waits_for_the_lock_are_refused_at_once(
        tmp_path: Path) -> None:
    """Queued behind the waiting group, each write held its request and waited the busy
    timeout again when its turn came (a review: 64 to 516 MB in 30 s of retried 1 MiB
    publishes)."""
    path = tmp_path / "shellexec.db"
    database = open_sqlite(f"sqlite:///{path}", readers=1, busy_timeout_ms=120_000)
    ran: list[str] = []

    async def scenario() -> BaseException | None:
        with _write_lock_held(path) as other:
            waiting = asyncio.ensure_future(database.write(lambda: ran.append("first")))
            while not database.waiting_for_lock:  # the leader hands the wait over
                await asyncio.sleep(0)
            try:
                await database.write(lambda: ran.append("second"))
            except DatabaseLockedError as refused:
                error: BaseException | None = refused
            else:
                error = None
            other.commit()
            await waiting
        return error

    try:
        assert isinstance(asyncio.run(scenario()), DatabaseLockedError)
        assert ran == ["first"]
    finally:
        database.close()


@pytest.mark.sqlite_only
def test_closing_ends_a_wait_for_the_lock(tmp_path: Path) -> None:
    """A stop waited out the whole busy timeout (up to an hour) for a BEGIN waiting on the
    committer thread, whatever signal came next."""
    path = tmp_path / "shellexec.db"
    database = open_sqlite(f"sqlite:///{path}", readers=1, busy_timeout_ms=300_000)

    async def scenario() -> float:
        waiting = asyncio.ensure_future(database.write(lambda: None))
        while not database.waiting_for_lock:
            await asyncio.sleep(0)
        started = time.monotonic()
        database.close()  # returns once the committer thread gave up
        closed_after = time.monotonic() - started
        with pytest.raises(DatabaseLockedError):
            await waiting
        return closed_after

    with _write_lock_held(path):
        # Not a measure of speed: without the slices, closing waits out the whole 300 s.
        assert asyncio.run(scenario()) < 150


def _another_program_writes(path: Path) -> str:
    """Another program's write to the file, without waiting for a lock: "committed", or the
    error it got."""
    other = sqlite3.connect(path, timeout=0)
    try:
        other.execute("UPDATE schema_version SET applied_at = applied_at + 1")
        other.commit()
        return "committed"
    except sqlite3.OperationalError as error:
        return str(error)
    finally:
        other.close()


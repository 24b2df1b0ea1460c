"""Opening the SQLite database and running units of work (`store.postgres` runs them on
PostgreSQL).

Writes run on the event loop's thread, one group at a time, with the loop thread's one
connection. Units of work are short (about 0.1 ms: fold one update, a few statements), and
keeping them off a separate writer thread avoids two threads contending for the interpreter
lock on every statement, which doubled their cost (ADR 0002).

Group commit: the first write that finds no group in progress starts a leader task; it lets
the writes made in the same loop iteration join, runs them in one `BEGIN IMMEDIATE`
transaction and commits once; writes that arrive meanwhile form the next group. When a unit
(or the commit) fails, the group rolls back and each unit runs again in a transaction of its
own, so a failure costs the others only a re-run; units of work must therefore be safe to run
again (they read what they need inside their transaction).

Durability is pipelined (ADR 0111): the writer connection commits with `synchronous=NORMAL`,
so COMMIT appends the group to the write-ahead log without waiting for the disk and runs on
the loop; a syncer task then makes the log durable with an fdatasync on the committer thread,
while the next groups run and commit. A group's callers hear of it (and its events reach
watchers) only after a sync that began after its COMMIT returned: acknowledgement still means
durable, on power loss too. One sync covers every group committed before it began. SQLite
still syncs the log before each checkpoint and the database file after it, so what a
checkpoint copies out of the log is durable before the log is reused.

Reads run on a small pool of reader threads, each with its own connection (WAL readers never
block the writer). A reader may see a group that is committed but not yet synced, so a read's
result, too, is held until the commits it could have seen are synced.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from peewee import Database as PeeweeDatabase
from peewee import SqliteDatabase

from shellexec.store.errors import UnsupportedDatabaseError
from shellexec.store.migrations import migrate
from shellexec.store.models import ALL_MODELS
from shellexec.store.readiness import readiness_problem
from shellexec.store.statements import Statements

T = TypeVar("T")

# The most units of work one commit carries.
MAX_GROUP = 64

# The page cache of each connection (writer and readers), in KiB, unless set otherwise.
DEFAULT_CACHE_KIB = 8 * 1024
# Pages of a new database file. Every commit writes each page it changed to the WAL, and a
# checkpoint writes it again: small pages make a publish write little more than it stores
# (ADR 0024). An existing file keeps the page size it was created with.
PAGE_SIZE = 1024
# The WAL is checkpointed once it holds this many pages (4 MiB): a page changed by many
# commits in between (a message row, the newest event leaf) reaches the file once.
WAL_AUTOCHECKPOINT_PAGES = 4096


def _pragmas(cache_kib: int) -> tuple[tuple[str, object], ...]:
    return (
        ("page_size", PAGE_SIZE),  # before journal_mode, which creates a new file
        ("journal_mode", "wal"),
        ("foreign_keys", 1),
        ("cache_size", -cache_kib),  # negative: KiB, not pages
        ("busy_timeout", 10_000),  # ms
        # A commit must survive power loss, not only a process crash. `Database`'s writer
        # connection alone commits with NORMAL and syncs the log itself (ADR 0111).
        ("synchronous", "full"),
        ("wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES),
        # This SQLite zeroes deleted content by default; trimmed chunks would cost their
        # size again in writes. FAST still zeroes what lies in pages being written anyway.
        ("secure_delete", "fast"),
    )

# A unit of work, the future its caller awaits and the id of the session it changes (or None).
Job = tuple[Callable[[], Any], "asyncio.Future[Any]", str | None]
Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]
# Flushes the file or directory at a path to disk (an fdatasync); blocking.
SyncPath = Callable[[Path], None]


def fdatasync_path(path: Path) -> None:
    """Flushes the file (or directory) at `path` to disk; blocking."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(descriptor)
    finally:
        os.close(descriptor)


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():  # the caller went away; the write stands all the same
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except FileNotFoundError:
        return 0


def _sqlite_path(url: str) -> Path:
    parsed = urlparse(url)
    if parsed.scheme != "sqlite":
        raise UnsupportedDatabaseError(parsed.scheme)
    # sqlite:///relative/path and sqlite:////absolute/path, as in playhouse.db_url.
    return Path(parsed.path[1:] if parsed.path.startswith("/") else parsed.path)


class Database:
    """The bound database: group-committed writes on the loop, reads on reader threads."""

    # What the store tells the units of work: this process is the only writer of the file
    # (SQLite), so what it remembers of its writes is the truth (see `Statements`).
    single_writer = True

    def __init__(self, db: PeeweeDatabase, readers: int = 3,
                 sync_path: SyncPath = fdatasync_path) -> None:
        """`sync_path` flushes the write-ahead log (and, once, its directory) to disk."""
        self.db = db
        # Compiled hot statements; used by units of work, which all run on one thread.
        self.statements = Statements(db, single_writer=self.single_writer)
        self._rollback_listeners: list[Callable[[], None]] = []
        self._group_listeners: list[Callable[[int], None]] = []
        self._pending: list[Job] = []
        self._leader: asyncio.Task[None] | None = None
        self._committer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-commit")
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="db-reader")
        self._reader_count = readers
        self._sync_path = sync_path
        # Groups committed by the writer connection, and how many of them a sync covers.
        self._commits = 0
        self._synced = 0
        # Outcomes held until a sync covers the commit they count up to (oldest first).
        self._held: deque[tuple[int, list[Outcome]]] = deque()
        self._syncer: asyncio.Task[None] | None = None
        # The commits the sync in flight (or the last one) covers, and a future set when the
        # next sync begins.
        self._sync_horizon = 0
        self._sync_begins: asyncio.Future[None] | None = None
        self._wal_listed = False

    def on_rollback(self, listener: Callable[[], None]) -> None:
        """Calls `listener` whenever writes roll back, so that caches of what units of work
        wrote (`Statements`' revisions among them) can forget it: `service.UnitCaches`
        registers the one listener that clears them all."""
        self._rollback_listeners.append(listener)

    def on_commit_group(self, listener: Callable[[int], None]) -> None:
        """Calls `listener` with the number of units of work of each group as it is formed
        (the metrics' commit group sizes: units per transaction; one sync may cover several
        groups)."""
        self._group_listeners.append(listener)

    @property
    def path(self) -> Path:
        """The database file."""
        return Path(self.db.database)

    def file_bytes(self) -> int:
        """The size of the database file plus its write-ahead log, in bytes (0 for a file
        that is not there); safe to call from any thread."""
        path = self.path
        return sum(_size(file) for file in (path, self._wal_path()))

    def _wal_path(self) -> Path:
        path = self.path
        return path.with_name(path.name + "-wal")

    def _ensure_connected(self) -> None:
        if self.db.is_closed():
            self.db.connect()

    def _connection(self) -> sqlite3.Connection:
        """The writer's connection (the loop thread's)."""
        opening = self.db.is_closed()
        self._ensure_connected()
        connection: sqlite3.Connection = self.db.connection()  # type: ignore[no-untyped-call]
        if opening:  # its COMMIT only appends to the log; `_sync_log` makes it durable
            connection.execute("PRAGMA synchronous = NORMAL")
        return connection

    def readiness_problem(self) -> str | None:
        """None when the database is there and fully migrated, else what is wrong; blocking."""
        return readiness_problem(self.path)

    async def write(self, work: Callable[[], T], session: str | None = None) -> T:
        """Runs `work` in a write transaction; returns once it is committed (durable).

        `session` names the session the unit changes, when it changes one: on a database
        with other writers its row is locked before the unit runs (see `store.postgres`)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._pending.append((work, future, session))
        if self._leader is None or self._leader.done():
            self._leader = loop.create_task(self._lead())
        return await future

    async def _lead(self) -> None:
        await asyncio.sleep(0)  # writes made in this loop iteration join the first group
        while self._pending:
            await self._sync_begun()
            group = self._pending[:MAX_GROUP]
            del self._pending[:MAX_GROUP]
            for listener in self._group_listeners:
                listener(len(group))
            self._hold(await self._run_group(group))

    async def _run_group(self, group: list[Job]) -> list[Outcome]:
        connection = self._connection()
        try:
            # IMMEDIATE takes the write lock up front: no lock upgrade can fail half-way.
            connection.execute("BEGIN IMMEDIATE")
            outcomes: list[Outcome] = [(future, work(), None) for work, future, _ in group]
            self._commit(connection)
            return outcomes
        except Exception:
            self._roll_back(connection)
        # Rare, so rather than pay a savepoint per unit, run each unit again alone: one
        # failure then costs the others a re-run, never their data. Earlier groups are
        # committed already, so what the units read again includes them.
        return [self._run_alone(connection, job) for job in group]

    def _run_alone(self, connection: sqlite3.Connection, job: Job) -> Outcome:
        work, future, _ = job
        try:
            connection.execute("BEGIN IMMEDIATE")
            value = work()
            self._commit(connection)
            return future, value, None
        except Exception as error:
            self._roll_back(connection)
            return future, None, error

    def _commit(self, connection: sqlite3.Connection) -> None:
        # Appends to the log without waiting for the disk (NORMAL); a checkpoint it starts
        # syncs the log and the file itself.
        connection.execute("COMMIT")
        self._commits += 1

    def _roll_back(self, connection: sqlite3.Connection) -> None:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        for listener in self._rollback_listeners:
            listener()

    def _hold(self, outcomes: list[Outcome]) -> None:
        """Settles `outcomes` once every commit made so far is synced (at once if it is):
        a unit's result may rest on what earlier groups wrote, as an error may."""
        if self._synced >= self._commits:
            for future, value, error in outcomes:
                _settle(future, value, error)
            return
        self._held.append((self._commits, outcomes))
        if self._syncer is None or self._syncer.done():
            self._syncer = asyncio.get_running_loop().create_task(self._sync_held())

    async def _sync_begun(self) -> None:
        """Returns once every commit made is covered by a sync in flight (or done).

        A group committed before then would only wait for the same next sync as the group
        committed before it: its writes wait, and join the next transaction instead."""
        while self._commits > self._sync_horizon:
            if self._sync_begins is None:
                self._sync_begins = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._sync_begins)

    def _covered(self, horizon: int) -> None:
        """Notes that a sync covering the commits up to `horizon` has begun."""
        self._sync_horizon = horizon
        begins, self._sync_begins = self._sync_begins, None
        if begins is not None and not begins.get_loop().is_closed():
            begins.set_result(None)

    async def _sync_held(self) -> None:
        loop = asyncio.get_running_loop()
        while self._held:
            horizon = self._commits  # every COMMIT counted here returned before the sync
            self._covered(horizon)
            failure: BaseException | None = None
            try:
                await loop.run_in_executor(self._committer, self._sync_log)
            except Exception as error:  # the groups' outcome on disk is unknown: say so
                failure = error
            self._synced = max(self._synced, horizon)
            while self._held and self._held[0][0] <= horizon:
                for future, value, unit_error in self._held.popleft()[1]:
                    _settle(future, value, unit_error or failure)

    def _sync_log(self) -> None:
        wal = self._wal_path()
        self._sync_path(wal)
        if not self._wal_listed:
            # The log lives as long as the connections; its directory entry is made durable
            # once, as SQLite does for a log it creates.
            self._sync_path(wal.parent)
            self._wal_listed = True

    def _read(self, work: Callable[[], T]) -> T:
        self._ensure_connected()
        with self.db.atomic():
            return work()

    async def read(self, work: Callable[[], T]) -> T:
        """Runs `work` in one read transaction (every read sees the same commit); returns
        once what it could see is durable, like a write's acknowledgement."""
        loop = asyncio.get_running_loop()
        value = await loop.run_in_executor(self._readers, self._read, work)
        if self._synced < self._commits:  # counted after the read: it saw no later commit
            synced: asyncio.Future[None] = loop.create_future()
            self._hold([(synced, None, None)])
            await synced
        return value

    def _close_readers(self) -> None:
        # Each reader holds its own connection; the barrier makes every thread run one close
        # task (the pool would otherwise hand several tasks to one idle thread).
        barrier = threading.Barrier(self._reader_count)

        def close_connection() -> None:
            if not self.db.is_closed():
                self.db.close()
            barrier.wait(timeout=5)

        for future in [self._readers.submit(close_connection)
                       for _ in range(self._reader_count)]:
            future.result()
        self._readers.shutdown(wait=True)

    def close(self) -> None:
        """Closes every connection; call it on the loop's thread once writes are done.

        Waits for the group or sync in flight, then syncs what is committed but not yet
        synced and settles what waited for it: nothing committed is left off the disk."""
        self._committer.shutdown(wait=True)
        try:
            if self._synced < self._commits:
                self._sync_log()
                self._synced = self._commits
                self._covered(self._commits)
                self._settle_held()
        finally:
            self._close_readers()
            if not self.db.is_closed():
                self.db.close()

    def _settle_held(self) -> None:
        while self._held:
            for future, value, error in self._held.popleft()[1]:
                if not future.get_loop().is_closed():  # else nobody waits for it any more
                    _settle(future, value, error)


def open_sqlite(url: str, readers: int = 3, cache_kib: int = DEFAULT_CACHE_KIB,
                sync_path: SyncPath = fdatasync_path) -> Database:
    """Opens (creating if needed) and migrates the SQLite database named by `url`; each of
    its `readers` + 1 connections keeps a page cache of up to `cache_kib` KiB, and
    `sync_path` makes its write-ahead log durable (see `Database`)."""
    path = _sqlite_path(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = SqliteDatabase(str(path), pragmas=_pragmas(cache_kib), autoconnect=False,
                        check_same_thread=False)
    db.bind(ALL_MODELS)
    db.connect()
    try:
        migrate(db)
    finally:
        db.close()
    return Database(db, readers=readers, sync_path=sync_path)


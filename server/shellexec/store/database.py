"""Opening the SQLite database and running units of work (`store.postgres` runs them on
PostgreSQL).

Writes run on the event loop's thread, one group at a time; only their COMMIT (the fsync)
runs on a committer thread, so the loop never waits for the disk. Units of work are short
(about 0.1 ms: fold one update, a few statements), and keeping them off a separate writer
thread avoids two threads contending for the interpreter lock on every statement, which
doubled their cost (ADR 0002).

Group commit: the first write that finds no group in progress starts a leader task; it lets
the writes made in the same loop iteration join, runs them in one `BEGIN IMMEDIATE`
transaction, commits once, then reports every result; writes that arrive meanwhile form the
next group. When a unit (or the commit) fails, the group rolls back and each unit runs again
in a transaction of its own, so a failure costs the others only a re-run; units of work must
therefore be safe to run again (they read what they need inside their transaction).
Acknowledgement means durable. Running the next group during the fsync instead (COMMIT with
`synchronous=normal` on the loop, the WAL synced by us) was measured slower: the loop pays
for COMMIT's writes, and on a fast disk the fsync is not what it waits for (ADR 0111).

Another program that holds the file's write lock (the `sqlite3` shell in a transaction, a
backup tool) makes BEGIN wait. SQLite's busy handler sleeps in the thread that runs the
statement, and on the loop it stopped every call, liveness checks included, for the whole busy
timeout. So the writer's connection never waits on the loop: BEGIN is tried at once there, and
only a BEGIN that found the lock taken is waited for on the committer thread, up to
SHELLEXEC_DB_BUSY_TIMEOUT_MS; a group that never got the lock stored nothing and is answered
UNAVAILABLE together (`DatabaseLockedError`), not run again unit by unit, and so are the
writes made while it waited, at once: queued, each held its request, to wait once more.

Reads run on a small pool of reader threads, each with its own connection (WAL readers never
block the writer).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlparse

from peewee import Database as PeeweeDatabase
from peewee import DatabaseError as PeeweeDatabaseError
from peewee import SqliteDatabase

from shellexec.store.errors import (
    DatabaseFullError,
    DatabaseLockedError,
    DatabaseOpenError,
    DatabaseUnavailableError,
    UnsupportedDatabaseError,
    driver_errors,
)
from shellexec.store.migrations import migrate
from shellexec.store.models import ALL_MODELS, SchemaVersion
from shellexec.store.readiness import readiness_problem
from shellexec.store.statements import Statements

T = TypeVar("T")

# The most units of work one commit carries.
MAX_GROUP = 64

# The page cache of each connection (writer and readers), in KiB, unless set otherwise.
DEFAULT_CACHE_KIB = 8 * 1024
# How long a statement waits for a lock another program holds on the file (a backup, the
# sqlite3 shell) before it fails.
DEFAULT_BUSY_TIMEOUT_MS = 10_000
# Pages of a new database file. Every commit writes each page it changed to the WAL, and a
# checkpoint writes it again: small pages make a publish write little more than it stores
# (ADR 0024). An existing file keeps the page size it was created with.
PAGE_SIZE = 1024
# The WAL is checkpointed once it holds this many pages (4 MiB): a page changed by many
# commits in between (a message row, the newest event leaf) reaches the file once.
WAL_AUTOCHECKPOINT_PAGES = 4096
# What the WAL file is cut back to when a checkpoint lets it start over, in pages of the file
# (a file made before ADR 0024 keeps 4 KiB pages): twice what it holds between checkpoints. A
# WAL that grew past that while a reader held an old snapshot (a long backup) kept its peak.
WAL_SIZE_LIMIT_PAGES = 2 * WAL_AUTOCHECKPOINT_PAGES
# How long the committer thread's BEGIN waits for another program's lock at a time, between
# looks at whether the database is closing: a stop waited out the whole busy timeout.
LOCK_WAIT_SLICE_MS = 100


def _pragmas(cache_kib: int, busy_timeout_ms: int) -> tuple[tuple[str, object], ...]:
    return (
        ("page_size", PAGE_SIZE),  # before journal_mode, which creates a new file
        ("journal_mode", "wal"),
        ("foreign_keys", 1),
        ("cache_size", -cache_kib),  # negative: KiB, not pages
        ("busy_timeout", busy_timeout_ms),
        # An acknowledged publish must survive power loss, not only a process crash.
        ("synchronous", "full"),
        ("wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES),
        # This SQLite zeroes deleted content by default; trimmed chunks would cost their
        # size again in writes. FAST still zeroes what lies in pages being written anyway.
        ("secure_delete", "fast"),
    )


_log = logging.getLogger(__name__)


def disk_full(error: BaseException) -> bool:
    """Whether `error` is SQLite's SQLITE_FULL ("database or disk is full": no room on the
    disk, or the file at `max_page_count`)."""
    return _sqlite_error(error, sqlite3.SQLITE_FULL)


def cannot_open(error: BaseException) -> bool:
    """Whether `error` is SQLite's SQLITE_CANTOPEN ("unable to open database file": the file
    or its folder is away, or not readable)."""
    return _sqlite_error(error, sqlite3.SQLITE_CANTOPEN)


def _sqlite_error(error: BaseException, code: int) -> bool:
    """Whether `error` is SQLite's error `code` (its primary code: an extended one's low
    byte), as sqlite3 raises it or under peewee's error."""
    return any(isinstance(found, sqlite3.Error)
               and (getattr(found, "sqlite_errorcode", 0) & 0xFF) == code
               for found in driver_errors(error))


# A unit of work, the future its caller awaits and the id of the session it changes (or None).
Job = tuple[Callable[[], Any], "asyncio.Future[Any]", str | None]
Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():  # the caller went away; the write stands all the same
        return
    if error is None:
        future.set_result(value)
    elif isinstance(error, StopIteration):
        # A future refuses StopIteration (TypeError), and its caller would wait for ever:
        # SHELLEXEC_KNOWN_SESSIONS=0 made every publish do so. It is a bug of the unit's.
        wrapped = RuntimeError(f"a unit of work raised StopIteration: {error!r}")
        wrapped.__cause__ = error
        future.set_exception(wrapped)
    else:
        future.set_exception(error)


def _begin_waiting(connection: sqlite3.Connection, busy_timeout_ms: int,
                   closing: threading.Event) -> None:
    """BEGIN IMMEDIATE with SQLite's busy handler on for up to `busy_timeout_ms` in all, a
    slice at a time until the database is `closing`, then off again; run on the committer
    thread while the loop's leader waits (nothing else uses the connection meanwhile)."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    try:
        while True:
            left_ms = max(0, int((deadline - time.monotonic()) * 1000))
            connection.execute(f"PRAGMA busy_timeout = {min(LOCK_WAIT_SLICE_MS, left_ms)}")
            try:
                connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if (not _sqlite_error(error, sqlite3.SQLITE_BUSY)
                        or left_ms <= LOCK_WAIT_SLICE_MS or closing.is_set()):
                    raise
    finally:
        connection.execute("PRAGMA busy_timeout = 0")


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except FileNotFoundError:
        return 0


def sqlite_path(url: str) -> Path:
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

    def __init__(self, db: PeeweeDatabase, readers: int = 3, file: Path | None = None) -> None:
        self.db = db
        self._file = file
        # Compiled hot statements; used by units of work, which all run on one thread.
        self.statements = Statements(db, single_writer=self.single_writer)
        self._rollback_listeners: list[Callable[[], None]] = []
        self._group_listeners: list[Callable[[int], None]] = []
        self._unknown_listeners: list[Callable[[str], None]] = []
        self._pending: list[Job] = []
        self._leader: asyncio.Task[None] | None = None
        self._committer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-commit")
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="db-reader")
        self._reader_count = readers
        # Whether the last write found the disk full (told once, until a write commits).
        self._full = False
        # The writer's connection, once its busy handler is off (see `_begin`), and how long
        # its BEGIN may wait for another program's lock, off the loop.
        self._writer: sqlite3.Connection | None = None
        self._busy_timeout_ms = DEFAULT_BUSY_TIMEOUT_MS
        # Set while a BEGIN waits for another program's lock: writes made meanwhile are refused
        # at once rather than queued, each holding its request, to wait once more in turn.
        self._waiting_for_lock = False
        self._closing = threading.Event()

    def on_rollback(self, listener: Callable[[], None]) -> None:
        """Calls `listener` whenever writes roll back, so that caches of what units of work
        wrote (`Statements`' revisions among them) can forget it: `service.UnitCaches`
        registers the one listener that clears them all."""
        self._rollback_listeners.append(listener)

    def on_outcome_unknown(self, listener: Callable[[str], None]) -> None:
        """Calls `listener` (on the event loop) with each session a write of which may have
        been stored although its caller heard UNAVAILABLE (the connection failed once COMMIT
        was sent): what it committed, if anything, was announced to no one here."""
        self._unknown_listeners.append(listener)

    def on_commit_group(self, listener: Callable[[int], None]) -> None:
        """Calls `listener` with the number of units of work of each group as it is formed
        (the metrics' commit group sizes)."""
        self._group_listeners.append(listener)

    @property
    def path(self) -> Path:
        """The database file."""
        assert self._file is not None, "only a SQLite database has a file"
        return self._file

    def file_bytes(self) -> int:
        """The size of the database file plus its write-ahead log, in bytes (0 for a file
        that is not there); safe to call from any thread."""
        path = self.path
        return sum(_size(file) for file in (path, path.with_name(path.name + "-wal")))

    @property
    def waiting_for_lock(self) -> bool:
        """Whether a write waits for the write lock another program holds on the file."""
        return self._waiting_for_lock

    def _ensure_connected(self) -> None:
        """Opens this thread's connection if it has none. A file that cannot be opened (moved
        away, its folder gone) is an unavailable database, as an unreachable server is on
        PostgreSQL: the call is answered UNAVAILABLE and may be retried once it is back."""
        if self.db.is_closed():
            try:
                self.db.connect()
            except PeeweeDatabaseError as error:
                if not cannot_open(error):
                    raise
                raise DatabaseUnavailableError(str(error)) from error

    def _connection(self) -> sqlite3.Connection:
        self._ensure_connected()
        connection: sqlite3.Connection = self.db.connection()  # type: ignore[no-untyped-call]
        return connection

    def readiness_problem(self) -> str | None:
        """None when the database is there and fully migrated, else what is wrong; blocking."""
        return readiness_problem(self.path)

    async def write(self, work: Callable[[], T], session: str | None = None,
                    settled: Callable[[asyncio.Future[T]], None] | None = None) -> T:
        """Runs `work` in a write transaction; returns once it is committed (durable).

        `session` names the session the unit changes, when it changes one: on a database
        with other writers its row is locked before the unit runs (see `store.postgres`).
        `settled`, when given, is called with the unit's future once its outcome is known,
        before this returns, and even if the caller went away meanwhile: a cancelled caller
        cannot stop a queued unit, so what must follow its commit (an announcement) waits for
        the unit, not for the caller."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if settled is not None:
            future.add_done_callback(settled)
        if self._waiting_for_lock:
            future.set_exception(DatabaseLockedError(self._busy_timeout_ms))
            return await future
        self._pending.append((work, future, session))
        if self._leader is None or self._leader.done():
            self._leader = loop.create_task(self._lead())
        # Shielded, the unit's future is settled by the group even once the caller is gone.
        return await (future if settled is None else asyncio.shield(future))

    async def _lead(self) -> None:
        await asyncio.sleep(0)  # writes made in this loop iteration join the first group
        while self._pending:
            group = self._pending[:MAX_GROUP]
            del self._pending[:MAX_GROUP]
            for listener in self._group_listeners:
                listener(len(group))
            outcomes: list[Outcome]
            try:
                outcomes = await self._run_group(group)
            except Exception as fault:  # of the group's own code: no caller waits for ever
                outcomes = [(future, None, fault) for _, future, _ in group]
            if any(isinstance(error, DatabaseLockedError) for _, _, error in outcomes):
                # The lock stayed taken: what queued behind the group would wait once more.
                locked = DatabaseLockedError(self._busy_timeout_ms)
                outcomes += [(future, None, locked) for _, future, _ in self._pending]
                self._pending.clear()
            for future, value, error in outcomes:
                _settle(future, value, error)
            self._tell_unknown(group, outcomes)

    def _tell_unknown(self, group: list[Job], outcomes: list[Outcome]) -> None:
        unknown = {id(future) for future, _, error in outcomes
                   if isinstance(error, DatabaseUnavailableError) and error.outcome_unknown}
        if not unknown:
            return
        for session in sorted({session for _, future, session in group
                               if session is not None and id(future) in unknown}):
            for listener in self._unknown_listeners:
                listener(session)

    async def _run_group(self, group: list[Job]) -> list[Outcome]:
        connection = self._writer_connection()
        try:
            await self._begin(connection)
        except DatabaseLockedError as locked:  # nothing ran: running each alone waits again
            return [(future, None, locked) for _, future, _ in group]
        try:
            outcomes: list[Outcome] = [(future, work(), None) for work, future, _ in group]
            await self._commit(connection)
            self._room_again()
            return outcomes
        except Exception:
            self._roll_back(connection)
        # Rare, so rather than pay a savepoint per unit, run each unit again alone: one
        # failure then costs the others a re-run, never their data.
        return [await self._run_alone(connection, job) for job in group]

    async def _run_alone(self, connection: sqlite3.Connection, job: Job) -> Outcome:
        work, future, _ = job
        try:
            await self._begin(connection)
            value = work()
            await self._commit(connection)
            self._room_again()
            return future, value, None
        except Exception as error:
            self._roll_back(connection)
            return future, None, self._stored_nothing(error)

    def _stored_nothing(self, error: Exception) -> Exception:
        """What a unit's failure is told as. A full disk (SQLITE_FULL, from a statement or
        from COMMIT, which SQLite then rolled back) stored nothing and passes once space is
        freed: `DatabaseFullError`, answered UNAVAILABLE, rather than the driver's
        OperationalError, answered INTERNAL and logged where the committer thread ran it. The
        operator is told once, until a write commits again."""
        if not self._disk_full(error):
            return error
        if not self._full:
            self._full = True
            _log.warning("the database's disk is full: writes are answered UNAVAILABLE, "
                         "and store nothing, until space is freed")
        full = DatabaseFullError()
        full.__cause__ = error
        return full

    def _disk_full(self, error: BaseException) -> bool:
        """Whether `error` says the database's disk is full (SQLite's SQLITE_FULL here)."""
        return disk_full(error)

    def _room_again(self) -> None:
        if self._full:
            self._full = False
            _log.warning("the database's disk has room again: writes are stored")

    def _writer_connection(self) -> sqlite3.Connection:
        """The loop's connection, with SQLite's busy handler off: no statement of it sleeps
        on the loop (`_begin` waits for the lock elsewhere)."""
        connection = self._connection()
        if connection is not self._writer:
            self._busy_timeout_ms = connection.execute("PRAGMA busy_timeout").fetchone()[0]
            connection.execute("PRAGMA busy_timeout = 0")
            page_size = connection.execute("PRAGMA page_size").fetchone()[0]
            connection.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_PAGES * page_size}")
            self._writer = connection
        return connection

    async def _begin(self, connection: sqlite3.Connection) -> None:
        """BEGIN IMMEDIATE, which takes the write lock up front, so no lock upgrade can fail
        half-way. At once when no other program holds the lock, as is usual; else waited for
        on the committer thread, up to the busy timeout, while the loop serves other calls.
        Raises DatabaseLockedError when the lock stayed taken."""
        try:
            connection.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if not _sqlite_error(error, sqlite3.SQLITE_BUSY):
                raise
        self._waiting_for_lock = True
        try:
            await asyncio.get_running_loop().run_in_executor(
                self._committer, _begin_waiting, connection, self._busy_timeout_ms,
                self._closing)
        except sqlite3.OperationalError as error:
            if not _sqlite_error(error, sqlite3.SQLITE_BUSY):
                raise
            raise DatabaseLockedError(self._busy_timeout_ms) from error
        finally:
            self._waiting_for_lock = False

    async def _commit(self, connection: sqlite3.Connection) -> None:
        # The fsync happens off the loop; nothing else uses this connection meanwhile (only
        # the leader writes, and it is waiting here).
        await asyncio.get_running_loop().run_in_executor(
            self._committer, connection.execute, "COMMIT")

    def _roll_back(self, connection: sqlite3.Connection) -> None:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        for listener in self._rollback_listeners:
            listener()

    def _read(self, work: Callable[[], T]) -> T:
        self._ensure_connected()
        with self.db.atomic():
            return work()

    async def read(self, work: Callable[[], T]) -> T:
        """Runs `work` in one read transaction (every read sees the same commit)."""
        return await asyncio.get_running_loop().run_in_executor(self._readers, self._read, work)

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
        """Closes every connection; call it on the loop's thread once writes are done."""
        self._closing.set()  # a BEGIN waiting for another program's lock gives up
        self._committer.shutdown(wait=True)
        self._close_readers()
        if not self.db.is_closed():
            self.db.close()


def open_sqlite(url: str, readers: int = 3, cache_kib: int = DEFAULT_CACHE_KIB,
                busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, upgrade: bool = True) -> Database:
    """Opens (creating if needed) and migrates the SQLite database named by `url`; each of
    its `readers` + 1 connections keeps a page cache of up to `cache_kib` KiB and waits up to
    `busy_timeout_ms` for a lock another program holds. Without `upgrade` an older database
    is OlderSchemaError (`migrate`)."""
    path = sqlite_path(url)
    if str(path) == ":memory:":  # each connection would have a database of its own
        raise DatabaseOpenError(str(path), "a file path is needed: the writer and the readers "
                                           "share one file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DatabaseOpenError(str(path), f"its folder cannot be made: "
                                           f"{error.strerror or error}") from None
    db = SqliteDatabase(str(path), pragmas=_pragmas(cache_kib, busy_timeout_ms), autoconnect=False,
                        check_same_thread=False)
    db.bind(ALL_MODELS)
    try:
        db.connect()
        try:
            migrate(db, upgrade)
            _probe_writes(db)
        finally:
            db.close()
    except PeeweeDatabaseError as error:
        raise DatabaseOpenError(str(path), str(error)) from None
    # From now on no connection creates the file: one opened while an operator had moved it
    # away made a new, empty database at the path, and SQLite took the real database's
    # write-ahead log into it, acknowledged writes and all. Opened so, it fails instead.
    db.init(_existing_file_uri(path), uri=True)
    return Database(db, readers=readers, file=path)


def _existing_file_uri(path: Path) -> str:
    """An SQLite URI that opens `path` for reading and writing, never creating it."""
    return f"file:{quote(str(path.absolute()))}?mode=rw"


def _probe_writes(db: SqliteDatabase) -> None:
    """Writes into the file and takes it back: a read-only file (or folder, for the
    write-ahead log) fails here rather than at the first request."""
    with db.atomic() as transaction:
        SchemaVersion.update(applied_at=SchemaVersion.applied_at).execute()
        transaction.rollback()


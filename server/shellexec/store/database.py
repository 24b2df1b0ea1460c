"""Opening the database and running units of work off the event loop.

peewee keeps connection state per thread, so a unit of work runs entirely on one thread.

Writes go to ONE writer thread (SQLite allows one writer at a time; writers contending for its
lock would sleep in its busy handler instead of queueing). The writer commits in groups: it
takes every unit of work waiting at that moment, runs them in one transaction, commits once,
and only then reports each result. When a unit fails, the group rolls back and each unit runs
again in a transaction of its own, so a failure costs the others nothing; units of work must
therefore be safe to run again after a rollback (they read what they need inside their
transaction). Acknowledgement still means durable, but concurrent publishes share one fsync.

Reads run on a small pool of reader threads, each with its own connection (WAL readers never
block the writer).
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
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
from shellexec.store.statements import Statements

T = TypeVar("T")

# The most units of work one commit carries.
MAX_GROUP = 64

_SQLITE_PRAGMAS = (
    ("journal_mode", "wal"),
    ("foreign_keys", 1),
    ("cache_size", -64 * 1024),  # KiB
    ("busy_timeout", 10_000),  # ms
    # An acknowledged publish must survive power loss, not only a process crash.
    ("synchronous", "full"),
)

# UPDATE ... RETURNING (one statement instead of two per feed revision) needs SQLite 3.35.
MIN_SQLITE = (3, 35, 0)

# A unit of work and the event-loop future its caller awaits.
_Job = tuple[Callable[[], Any], "asyncio.Future[Any]"]
_Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]


def _deliver(outcomes: list[_Outcome]) -> None:
    for future, value, error in outcomes:
        if future.cancelled():  # the caller went away; the write stands all the same
            continue
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)


class _SqliteDatabase(SqliteDatabase):
    """SQLite with RETURNING enabled, which peewee leaves off by default."""

    returning_clause = True


def _sqlite_path(url: str) -> Path:
    parsed = urlparse(url)
    if parsed.scheme != "sqlite":
        raise UnsupportedDatabaseError(parsed.scheme)
    # sqlite:///relative/path and sqlite:////absolute/path, as in playhouse.db_url.
    return Path(parsed.path[1:] if parsed.path.startswith("/") else parsed.path)


class Database:
    """The bound database, its writer thread and its reader threads."""

    def __init__(self, db: PeeweeDatabase, readers: int = 3) -> None:
        self.db = db
        # Compiled hot statements; used by units of work, which all run on the writer thread.
        self.statements = Statements(db)
        self._rollback_listeners: list[Callable[[], None]] = [self.statements.forget]
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_loop, name="db-writer", daemon=True)
        self._writer.start()
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="db-reader")
        self._reader_count = readers

    def _ensure_connected(self) -> None:
        if self.db.is_closed():
            self.db.connect()

    def _next_group(self, first: _Job) -> list[_Job]:
        group = [first]
        while len(group) < MAX_GROUP:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is None:
                self._jobs.put(None)  # let the loop see the stop request next
                break
            group.append(job)
        return group

    def _transaction(self) -> Any:
        # IMMEDIATE takes the write lock up front: no lock upgrade can fail half-way.
        return self.db.atomic(lock_type="IMMEDIATE")

    def _commit_together(self, group: list[_Job]) -> list[_Outcome]:
        with self._transaction():
            return [(future, work(), None) for work, future in group]

    def on_rollback(self, listener: Callable[[], None]) -> None:
        """Calls `listener` on the writer thread whenever writes roll back, so that caches
        of what units of work wrote can forget it."""
        self._rollback_listeners.append(listener)

    def _rolled_back(self) -> None:
        for listener in self._rollback_listeners:
            listener()

    def _commit_alone(self, job: _Job) -> _Outcome:
        work, future = job
        try:
            with self._transaction():
                return future, work(), None
        except Exception as error:
            self._rolled_back()
            return future, None, error

    def _run_group(self, group: list[_Job]) -> None:
        self._ensure_connected()
        try:
            outcomes = self._commit_together(group)
        except Exception:
            self._rolled_back()
            # A unit (or the commit) failed and the whole transaction rolled back. Rare, so
            # rather than pay a savepoint per unit, run each unit again in its own
            # transaction: one failure then costs the others nothing.
            outcomes = [self._commit_alone(job) for job in group]
        # One wake-up of the event loop per group, not one per unit of work.
        by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        for outcome in outcomes:
            by_loop.setdefault(outcome[0].get_loop(), []).append(outcome)
        for loop, delivered in by_loop.items():
            loop.call_soon_threadsafe(_deliver, delivered)

    def _write_loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._run_group(self._next_group(job))
        if not self.db.is_closed():
            self.db.close()

    def _read(self, work: Callable[[], T]) -> T:
        self._ensure_connected()
        with self.db.atomic():
            return work()

    async def write(self, work: Callable[[], T]) -> T:
        """Runs `work` in a write transaction; returns once it is committed (durable)."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((work, future))
        return await future

    async def read(self, work: Callable[[], T]) -> T:
        """Runs `work` in one read transaction (a consistent snapshot)."""
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
        """Finishes queued writes, then closes every thread's connection."""
        self._jobs.put(None)
        self._writer.join()
        self._close_readers()


def open_database(url: str, readers: int = 3) -> Database:
    """Opens (creating if needed) and migrates the database named by `url`.

    Only `sqlite:///PATH` is supported today; PostgreSQL is planned for more than one replica.
    """
    path = _sqlite_path(url)
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise UnsupportedDatabaseError(f"sqlite {sqlite3.sqlite_version} (need 3.35 or newer)")
    path.parent.mkdir(parents=True, exist_ok=True)
    db = _SqliteDatabase(str(path), pragmas=_SQLITE_PRAGMAS, autoconnect=False,
                        check_same_thread=False)
    db.bind(ALL_MODELS)
    db.connect()
    try:
        migrate(db)
    finally:
        db.close()
    return Database(db, readers=readers)

"""Opening the database and running units of work off the event loop.

peewee keeps connection state per thread, so a unit of work (one connection scope, one
transaction) runs entirely inside one call on a small dedicated thread pool. Each pool thread
keeps its own connection open between units of work (SQLite opens are cheap but pragmas are
not free).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlparse

from peewee import Database as PeeweeDatabase
from peewee import SqliteDatabase

from shellexec.store.errors import UnsupportedDatabaseError
from shellexec.store.migrations import migrate
from shellexec.store.models import ALL_MODELS

T = TypeVar("T")

_SQLITE_PRAGMAS = (
    ("journal_mode", "wal"),
    ("foreign_keys", 1),
    ("cache_size", -64 * 1024),  # KiB
    ("busy_timeout", 10_000),  # ms
    # An acknowledged publish must survive power loss, not only a process crash.
    ("synchronous", "full"),
)


def _sqlite_path(url: str) -> Path:
    parsed = urlparse(url)
    if parsed.scheme != "sqlite":
        raise UnsupportedDatabaseError(parsed.scheme)
    # sqlite:///relative/path and sqlite:////absolute/path, as in playhouse.db_url.
    return Path(parsed.path[1:] if parsed.path.startswith("/") else parsed.path)


class Database:
    """The bound database plus the thread pool its units of work run on."""

    def __init__(self, db: PeeweeDatabase, workers: int = 4) -> None:
        self.db = db
        self._workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="db")

    @property
    def is_sqlite(self) -> bool:
        return isinstance(self.db, SqliteDatabase)

    def _ensure_connected(self) -> None:
        if self.db.is_closed():
            self.db.connect()

    def _write(self, work: Callable[[], T]) -> T:
        self._ensure_connected()
        lock = {"lock_type": "IMMEDIATE"} if self.is_sqlite else {}
        with self.db.atomic(**lock):
            return work()

    def _read(self, work: Callable[[], T]) -> T:
        self._ensure_connected()
        with self.db.atomic():
            return work()

    async def write(self, work: Callable[[], T]) -> T:
        """Runs `work` in one write transaction; returns once it is committed (durable)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._write, work)

    async def read(self, work: Callable[[], T]) -> T:
        """Runs `work` in one read transaction (a consistent snapshot)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._read, work)

    def run_sync_write(self, work: Callable[[], T]) -> T:
        """The same as `write`, on the calling thread (scripts and tests)."""
        return self._write(work)

    def close(self) -> None:
        """Closes every pool thread's connection and stops the pool."""
        # Each pool thread holds its own connection; the barrier makes every thread run one
        # close task (the pool would otherwise hand several tasks to one idle thread).
        workers = self._workers
        barrier = threading.Barrier(workers)

        def close_connection() -> None:
            if not self.db.is_closed():
                self.db.close()
            barrier.wait(timeout=5)

        futures = [self._executor.submit(close_connection) for _ in range(workers)]
        for future in futures:
            future.result()
        self._executor.shutdown(wait=True)
        if not self.db.is_closed():
            self.db.close()


def open_database(url: str, workers: int = 4) -> Database:
    """Opens (creating if needed) and migrates the database named by `url`.

    Only `sqlite:///PATH` is supported today; PostgreSQL is planned for more than one replica.
    """
    path = _sqlite_path(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = SqliteDatabase(str(path), pragmas=_SQLITE_PRAGMAS, autoconnect=False,
                        check_same_thread=False)
    db.bind(ALL_MODELS)
    db.connect()
    try:
        migrate(db)
    finally:
        db.close()
    return Database(db, workers=workers)

"""The server's object graph, built in one place: the app and the store tests both use it."""

from __future__ import annotations

from dataclasses import dataclass

from shellexec.api import ShellExecServicer
from shellexec.api.offload import Offload
from shellexec.app.settings import Settings
from shellexec.feed import FeedHub
from shellexec.service import (
    Clock,
    IdFactory,
    Publisher,
    Reader,
    Sessions,
    UnitCaches,
    random_id,
    system_clock,
)
from shellexec.store import Database, open_database


@dataclass(frozen=True)
class Composition:
    """The opened database, the feed hub and the use cases over them, and their servicer."""

    database: Database
    feed: FeedHub
    caches: UnitCaches
    sessions: Sessions
    publisher: Publisher
    reader: Reader
    # Worker processes for large request conversions; `close()` stops them.
    offload: Offload
    servicer: ShellExecServicer

    def close(self) -> None:
        """Stops the conversion workers and closes the database."""
        self.offload.close()
        self.database.close()


def compose(settings: Settings, clock: Clock = system_clock,
            ids: IdFactory = random_id) -> Composition:
    """Opens the database of `settings` and builds everything that serves it."""
    database = open_database(settings.database_url)
    feed = FeedHub()
    caches = UnitCaches(database)  # cleared when a commit group rolls back
    sessions = Sessions(database, feed, caches, clock, ids)
    publisher = Publisher(database, feed, caches, clock, ids)
    reader = Reader(database, feed, settings.heartbeat_seconds,
                    settings.stream_lifetime_seconds)
    offload = Offload(settings.conversion_workers)
    return Composition(database, feed, caches, sessions, publisher, reader, offload,
                       ShellExecServicer(sessions, publisher, reader, offload,
                                         settings.stalled_watcher_seconds))

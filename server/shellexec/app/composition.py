"""The server's object graph, built in one place: the app and the store tests both use it."""

from __future__ import annotations

from dataclasses import dataclass

from shellexec.api import ShellExecServicer
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
    servicer: ShellExecServicer


def compose(settings: Settings, clock: Clock = system_clock,
            ids: IdFactory = random_id) -> Composition:
    """Opens the database of `settings` and builds everything that serves it."""
    database = open_database(settings.database_url, cache_kib=settings.db_cache_kib)
    feed = FeedHub()
    caches = UnitCaches(database, settings.state_cache_mib * 1024 * 1024,  # cleared on a
                        settings.known_sessions)  # rollback
    sessions = Sessions(database, feed, caches, clock, ids)
    publisher = Publisher(database, feed, caches, clock, ids)
    reader = Reader(database, feed, settings.heartbeat_seconds,
                    settings.stream_lifetime_seconds)
    return Composition(database, feed, caches, sessions, publisher, reader,
                       ShellExecServicer(sessions, publisher, reader))

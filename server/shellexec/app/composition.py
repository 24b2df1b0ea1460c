"""The server's object graph, built in one place: the app and the store tests both use it."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from shellexec.api import ShellExecServicer
from shellexec.app.metrics import Metrics, create_metrics
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
from shellexec.service.publishing import PUBLISH_OUTCOMES
from shellexec.store import Database, open_database


@dataclass(frozen=True)
class Composition:
    """The opened database, the feed hub and the use cases over them, their servicer, and
    the metrics they record (in a registry of this graph's own)."""

    database: Database
    feed: FeedHub
    caches: UnitCaches
    sessions: Sessions
    publisher: Publisher
    reader: Reader
    servicer: ShellExecServicer
    metrics: Metrics


def compose(settings: Settings, clock: Clock = system_clock,
            ids: IdFactory = random_id) -> Composition:
    """Opens the database of `settings` and builds everything that serves it."""
    metrics = create_metrics(CollectorRegistry())
    database = open_database(settings.database_url)
    database.on_commit_group(metrics.commit_groups.observe)
    metrics.database_bytes.set_function(database.file_bytes)
    feed = FeedHub(on_delivery=metrics.delivery_lag.observe)
    metrics.watchers.set_function(lambda: feed.watchers)
    caches = UnitCaches(database)  # cleared when a commit group rolls back
    sessions = Sessions(database, feed, caches, clock, ids)
    publisher = Publisher(database, feed, caches, clock, ids,
                          on_outcome=metrics.count_publish(PUBLISH_OUTCOMES))
    reader = Reader(database, feed, settings.heartbeat_seconds,
                    settings.stream_lifetime_seconds)
    return Composition(database, feed, caches, sessions, publisher, reader,
                       ShellExecServicer(sessions, publisher, reader), metrics)

"""The server's object graph, built in one place: the app and the store tests both use it."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from shellexec.api import ShellExecServicer
from shellexec.api.offload import Offload
from shellexec.app.metrics import Metrics, create_metrics
from shellexec.app.settings import Settings
from shellexec.feed import FeedHub
from shellexec.projection import MaskedTexts, Masking
from shellexec.service import (
    Clock,
    Deletion,
    IdFactory,
    Publisher,
    Reader,
    Sessions,
    UnitCaches,
    system_clock,
    time_ordered_id,
)
from shellexec.service.feed_relay import FeedRelay
from shellexec.service.housekeeping import Housekeeping
from shellexec.service.pacing import WriterPace
from shellexec.service.publishing import PUBLISH_OUTCOMES
from shellexec.service.replay_pacing import ReplayPace
from shellexec.service.tokens import Tokens
from shellexec.store import Database, open_database
from shellexec.store.feed_notices import FeedListener
from shellexec.store.postgres import PostgresDatabase


@dataclass(frozen=True)
class Composition:
    """The opened database, the feed hub and the use cases over them, the token store, their
    servicer, and the metrics they record (in a registry of this graph's own)."""

    database: Database
    feed: FeedHub
    caches: UnitCaches
    sessions: Sessions
    publisher: Publisher
    reader: Reader
    deletion: Deletion
    # The periodic sweep of retention and compaction; the server runs it.
    housekeeping: Housekeeping
    tokens: Tokens
    # Worker processes for large request conversions; `close()` stops them.
    offload: Offload
    servicer: ShellExecServicer
    metrics: Metrics
    # PostgreSQL only: the other replicas' feed notices, and the relay that delivers their
    # events to this replica's watchers (ADR 0071); the server starts and stops them.
    listener: FeedListener | None = None
    relay: FeedRelay | None = None

    def close(self) -> None:
        """Stops the conversion workers and closes the database."""
        self.offload.close()
        self.database.close()


def compose(settings: Settings, clock: Clock = system_clock,
            ids: IdFactory = time_ordered_id) -> Composition:
    """Opens the database of `settings` and builds everything that serves it."""
    metrics = create_metrics(CollectorRegistry())
    database = open_database(settings.database_url, cache_kib=settings.db_cache_kib,
                             pool_size=settings.database_pool_size,
                             busy_timeout_ms=settings.db_busy_timeout_ms)
    database.on_commit_group(metrics.commit_groups.observe)
    metrics.database_bytes.set_function(database.file_bytes)
    feed = FeedHub(on_delivery=metrics.delivery_lag.observe,
                   on_refused=metrics.refused_watchers.inc)
    metrics.watchers.set_function(lambda: feed.watchers)
    database.on_outcome_unknown(feed.wake)  # a write may be stored that no one announced
    caches = UnitCaches(database, settings.state_cache_mib * 1024 * 1024,  # cleared on a
                        settings.known_sessions)  # rollback
    masked_texts = MaskedTexts()
    metrics.masked_text_bytes.set_function(lambda: masked_texts.held_bytes)
    masking = Masking(enabled=settings.mask_secrets, kept=masked_texts)
    sessions = Sessions(database, feed, caches, clock, ids, masking=masking)
    publisher = Publisher(database, feed, caches, clock, ids, masking=masking,
                          mask_at_rest=settings.mask_at_rest,
                          on_outcome=metrics.count_publish(PUBLISH_OUTCOMES),
                          pace=WriterPace(on_wait=metrics.paced_seconds.inc))
    reader = Reader(database, feed, settings.heartbeat_seconds,
                    settings.stream_lifetime_seconds, masking=masking,
                    replay_pace=ReplayPace(on_wait=metrics.replay_paced_seconds.inc))
    deletion = Deletion(database, feed, caches, clock)
    offload = Offload(settings.conversion_workers)
    housekeeping = Housekeeping(database, deletion, clock,
                                retention_days=settings.retention_days,
                                feed_retention_hours=settings.feed_retention_hours,
                                on_pruned=metrics.count_pruned)
    relay = listener = None
    if isinstance(database, PostgresDatabase):
        relay = FeedRelay(feed, reader.logged_events)
        listener = database.listener(relay.notice, relay.reconnected)
    return Composition(database, feed, caches, sessions, publisher, reader, deletion,
                       housekeeping, Tokens(database, clock), offload,
                       ShellExecServicer(sessions, publisher, reader, deletion, offload,
                                         settings.stalled_watcher_seconds), metrics,
                       listener, relay)

"""The server's Prometheus metrics, registered in a registry of the server's own.

Nothing here is a module-level default: `create_metrics` is given the registry (one per
server, built in `compose()`) and returns the metric families; the parts that record get the
families, or callbacks over them, passed in. Labelled children on hot paths (publish outcomes,
request methods) are looked up once and kept, since a `labels()` call costs more than the
increment itself. See docs/operations.md for what each metric means.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from shellexec.store.models import Event, PublishReceipt

# Seconds; calls range from sub-millisecond publishes to feed streams of minutes.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                   2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
# Units of work per commit; a group holds at most store.database.MAX_GROUP (64).
GROUP_BUCKETS = (1, 2, 4, 8, 16, 32, 64)
# Seconds from a commit's announcement to its watcher taking the event.
LAG_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0)
# The tables a retention or compaction pass prunes rows from.
PRUNED_TABLES = (Event._meta.table_name, PublishReceipt._meta.table_name)


@dataclass(frozen=True)
class Metrics:
    """Every metric family the server exports, all in `registry`."""

    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    publishes: Counter
    commit_groups: Histogram
    watchers: Gauge
    refused_watchers: Counter
    delivery_lag: Histogram
    database_bytes: Gauge
    masked_text_bytes: Gauge
    pruned_rows: Counter
    request_bytes: Gauge
    waiting_requests: Gauge
    request_streams: Gauge
    paced_seconds: Counter
    replay_paced_seconds: Counter

    def count_publish(self, outcomes: tuple[str, ...]) -> Callable[[str], None]:
        """A callback counting one publish by its outcome (one of `outcomes`)."""
        children = {outcome: self.publishes.labels(outcome=outcome) for outcome in outcomes}

        def count(outcome: str) -> None:
            children[outcome].inc()

        return count

    def count_pruned(self, table: str, rows: int) -> None:
        """Counts `rows` deleted from `table` by retention or compaction."""
        self.pruned_rows.labels(table=table).inc(rows)


def create_metrics(registry: CollectorRegistry) -> Metrics:
    """Registers the server's metric families in `registry`."""
    pruned = Counter("shellexec_pruned_rows", "Rows deleted by retention and feed compaction, "
                     "by table.", ["table"], registry=registry)
    for table in PRUNED_TABLES:
        pruned.labels(table=table)  # exported at 0 from the start, not when first pruned
    return Metrics(
        registry=registry,
        requests=Counter("shellexec_requests", "gRPC calls finished, by method and status code.",
                         ["method", "code"], registry=registry),
        latency=Histogram("shellexec_request_duration_seconds",
                          "Time from a call's start to its status, by method (a feed stream "
                          "counts its whole life).", ["method"], buckets=LATENCY_BUCKETS,
                          registry=registry),
        publishes=Counter("shellexec_publishes", "PublishUpdate calls committed, by outcome: "
                          "stored, duplicate (a repeated sequence) or ignored (an update "
                          "type that changes no message).", ["outcome"], registry=registry),
        commit_groups=Histogram("shellexec_commit_group_size",
                                "Units of work committed together by one group commit.",
                                buckets=GROUP_BUCKETS, registry=registry),
        watchers=Gauge("shellexec_watchers", "Feed streams following live events now.",
                       registry=registry),
        # No label: which caller was refused is not the metrics' to say (token names).
        refused_watchers=Counter("shellexec_watchers_refused",
                                 "Feed streams refused because their caller already held "
                                 "as many open on this server as it may (TOO_MANY_WATCHERS).",
                                 registry=registry),
        delivery_lag=Histogram("shellexec_feed_delivery_lag_seconds",
                               "Time from an event's commit to its watcher taking it.",
                               buckets=LAG_BUCKETS, registry=registry),
        database_bytes=Gauge("shellexec_database_bytes",
                             "Size of the database file plus its write-ahead log.",
                             registry=registry),
        masked_text_bytes=Gauge("shellexec_masked_text_bytes",
                                "Memory held by texts kept masked because masking them was "
                                "costly (ADR 0147).", registry=registry),
        pruned_rows=pruned,
        request_bytes=Gauge("shellexec_request_bytes",
                            "Bytes the request budget counts as held now: a message's worth "
                            "for each call whose message is still to arrive, the message's "
                            "size for each call whose message has (ADR 0140).",
                            registry=registry),
        waiting_requests=Gauge("shellexec_requests_waiting",
                               "Calls waiting, unread, for room in the request budget.",
                               registry=registry),
        request_streams=Gauge("shellexec_request_streams",
                              "Request streams (reflection) served now.", registry=registry),
        # No label, as for refused watchers: which caller is paced is not the metrics' to say.
        paced_seconds=Counter("shellexec_publish_paced_seconds",
                              "Time publishes waited because their caller's publishes had "
                              "taken more than their share of the writer (ADR 0148).",
                              registry=registry),
        replay_paced_seconds=Counter(
            "shellexec_replay_paced_seconds",
            "Time feed replays waited because their caller's replays had read more than "
            "their rate of the log (ADR 0133).", registry=registry),
    )

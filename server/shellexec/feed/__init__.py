"""Per-session feed events, their in-process fan-out, and a watcher's stream.

The durable log is the `event` table (see `store`); `FeedHub` only wakes watchers of this
process. A watcher that sees a gap in revisions, or that lagged, replays from the table
(`stream.follow`). Each caller holds a bounded number of subscriptions (`watcher_counts`).
"""

from __future__ import annotations

from shellexec.feed.hub import FeedEvent, FeedHub, Subscription
from shellexec.feed.watcher_counts import WatcherBoundError

__all__ = ["FeedEvent", "FeedHub", "Subscription", "WatcherBoundError"]

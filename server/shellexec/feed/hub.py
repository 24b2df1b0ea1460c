"""In-process fan-out of committed feed events to the watchers of a session."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from shellexec.feed.watcher_counts import WatcherBoundError, WatcherCounts
from shellexec.projection import MessageView, TurnView
from shellexec.projection.weight import view_weight
from shellexec.rules.limits import FEED_QUEUE_BYTES, FEED_QUEUE_EVENTS, MAX_WATCHERS_PER_CALLER
from shellexec.vocabulary import EVENT_END_OF_STREAM, EVENT_HEARTBEAT


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One event of a session's feed: a message event carries its message, a turn event its
    turn; heartbeat and end of stream carry neither."""

    type: str
    revision: int
    message: MessageView | None = None
    turn: TurnView | None = None


# Told, for each live event a watcher takes, the seconds since it was announced.
DeliveryListener = Callable[[float], None]
# Told of each subscription refused because its owner held as many as it may.
RefusalListener = Callable[[], None]


def _unmeasured(seconds: float) -> None:
    return None


def _uncounted() -> None:
    return None


def event_weight(event: FeedEvent) -> int:
    """About how many bytes `event` keeps alive while it is queued (`projection.weight`)."""
    return view_weight(event.message)


class Subscription:
    """A watcher's queue of live events. A queue full by count (`capacity`) or by the weight
    of its events (`capacity_bytes`) marks it lagged instead of blocking publishers and is
    emptied, so a watcher that stopped reading holds no events; the watcher then replays
    from the durable log. Each event is queued with the (monotonic) time it was announced,
    for the delivery lag. `owner` is the caller it is counted against (`WatcherCounts`)."""

    def __init__(self, capacity: int, capacity_bytes: int,
                 on_delivery: DeliveryListener = _unmeasured, owner: str = "") -> None:
        self.owner = owner
        # (event, the time it was announced, its weight); a wake-up has neither time nor
        # weight.
        self._queue: asyncio.Queue[tuple[FeedEvent, float | None, int]] = asyncio.Queue(
            maxsize=capacity)
        self._capacity_bytes = capacity_bytes
        self._queued_bytes = 0
        self._on_delivery = on_delivery
        self.lagged = False
        # Set when the server stops: the watcher ends its stream at once (it resumes by
        # revision elsewhere) instead of holding the shutdown until its grace runs out.
        self.closed = False
        # The event that ends the stream instead of `end_of_stream` (`session_deleted`).
        self.final_type: str | None = None

    def offer(self, event: FeedEvent, weight: int | None = None) -> None:
        """Queues `event`; `weight` is its `event_weight`, when the caller weighed it once
        for every watcher."""
        if self.lagged:
            return  # the replay from the log covers it; a wake-up is queued already
        if weight is None:
            weight = event_weight(event)
        if self._queue.full() or self._queued_bytes + weight > self._capacity_bytes:
            self._lag(event)
            return
        self._queue.put_nowait((event, time.monotonic(), weight))
        self._queued_bytes += weight

    def _lag(self, event: FeedEvent) -> None:
        self.lagged = True
        while not self._queue.empty():  # all of it is in the durable log
            self._queue.get_nowait()
        self._queued_bytes = 0
        # Wakes the watcher, which then replays; it is not weighed: nothing else is queued
        # until the watcher has taken it.
        self._queue.put_nowait((event, None, 0))

    def close(self) -> None:
        """Marks the subscription closed and wakes a watcher waiting for its next event."""
        self.closed = True
        # A full queue wakes the watcher by itself; an empty one needs something to return.
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait((FeedEvent(EVENT_END_OF_STREAM, -1), None, 0))

    def wake(self) -> None:
        """Sends the watcher back to the durable log, which may hold events no broadcast
        announced (the feed's notices from other replicas were interrupted)."""
        self.offer(FeedEvent(EVENT_HEARTBEAT, -1))  # no revision follows -1: a replay
        self.lagged = True

    def finish(self, final_type: str) -> None:
        """Closes the subscription so that its stream ends with an event of `final_type`."""
        self.final_type = final_type
        self.close()

    async def next(self, timeout: float) -> FeedEvent | None:
        """The next live event, or None when `timeout` seconds pass without one.

        Not `asyncio.wait_for`: on Python 3.11 it returns an event that arrived as the watcher
        was cancelled, and drops the cancellation; the stream, closed by its client, then
        held its place among its caller's feeds until the next heartbeat's write failed."""
        try:
            async with asyncio.timeout(timeout):
                event, announced, weight = await self._queue.get()
        except TimeoutError:
            return None
        self._queued_bytes -= weight
        if announced is not None:
            self._on_delivery(time.monotonic() - announced)
        return event


class FeedHub:
    """Delivers committed events to the subscriptions of their session (one event loop).
    Each owner (caller) holds at most `per_owner` subscriptions at once (ADR 0135)."""

    def __init__(self, capacity: int = FEED_QUEUE_EVENTS,
                 capacity_bytes: int = FEED_QUEUE_BYTES,
                 on_delivery: DeliveryListener = _unmeasured, *,
                 per_owner: int = MAX_WATCHERS_PER_CALLER,
                 on_refused: RefusalListener = _uncounted) -> None:
        self._capacity = capacity
        self._capacity_bytes = capacity_bytes
        self._on_delivery = on_delivery
        self._counts = WatcherCounts(per_owner)
        self._on_refused = on_refused
        self._subscriptions: dict[str, set[Subscription]] = defaultdict(set)
        # The latest revision broadcast of each watched session.
        self._broadcast: dict[str, int] = {}
        self._watchers = 0
        self._closed = False

    @property
    def watchers(self) -> int:
        """How many subscriptions are open now (readable from any thread: the metrics')."""
        return self._watchers

    def held_by(self, owner: str) -> int:
        """How many subscriptions `owner` holds open now."""
        return self._counts.held(owner)

    def subscribe(self, session_id: str, owner: str = "") -> Subscription:
        """A new subscription to the session's live events, counted against `owner`;
        WatcherBoundError, with nothing subscribed, when `owner` already holds as many as
        it may. Every subscription must be given to `unsubscribe` once it ends."""
        try:
            self._counts.take(owner)
        except WatcherBoundError:
            self._on_refused()
            raise
        subscription = Subscription(self._capacity, self._capacity_bytes, self._on_delivery,
                                    owner)
        if self._closed:
            subscription.close()
        self._subscriptions[session_id].add(subscription)
        self._watchers += 1
        return subscription

    def close(self) -> None:
        """Closes every subscription, now and to come: the server is stopping."""
        self._closed = True
        for watchers in self._subscriptions.values():
            for subscription in watchers:
                subscription.close()

    def unsubscribe(self, session_id: str, subscription: Subscription) -> None:
        watchers = self._subscriptions.get(session_id)
        if watchers is None or subscription not in watchers:
            return
        watchers.discard(subscription)
        self._watchers -= 1
        self._counts.give_back(subscription.owner)
        if not watchers:
            del self._subscriptions[session_id]
            self._broadcast.pop(session_id, None)

    def finish(self, session_id: str, final_type: str) -> None:
        """Ends every watcher's stream of the session with an event of `final_type`."""
        for subscription in tuple(self._subscriptions.get(session_id, ())):
            subscription.finish(final_type)

    def watched(self, session_id: str) -> bool:
        return session_id in self._subscriptions

    def latest(self, session_id: str) -> int | None:
        """The latest revision broadcast to the session's watchers, None before any."""
        return self._broadcast.get(session_id)

    def wake(self, session_id: str) -> None:
        """Sends the session's watchers back to the durable log (see `Subscription.wake`)."""
        for subscription in self._subscriptions.get(session_id, ()):
            subscription.wake()

    def wake_all(self) -> None:
        """Sends every watcher back to the durable log (see `Subscription.wake`)."""
        for watchers in self._subscriptions.values():
            for subscription in watchers:
                subscription.wake()

    def broadcast(self, session_id: str, event: FeedEvent) -> None:
        """Offers a committed event to every watcher of its session."""
        watchers = self._subscriptions.get(session_id)
        if not watchers:
            return
        self._broadcast[session_id] = max(event.revision, self._broadcast.get(session_id, 0))
        weight = event_weight(event)
        for subscription in tuple(watchers):
            subscription.offer(event, weight)

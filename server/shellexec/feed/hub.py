"""In-process fan-out of committed feed events to the watchers of a session."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass

from shellexec.projection import MessageView

MESSAGE_ADDED = "session.message.added"
MESSAGE_UPDATED = "session.message.updated"
HEARTBEAT = "heartbeat"
END_OF_STREAM = "end_of_stream"


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One event of a session's feed; `message` is None for heartbeat and end of stream."""

    type: str
    revision: int
    message: MessageView | None = None


class Subscription:
    """A watcher's queue of live events. A full queue marks it lagged instead of blocking
    publishers; the watcher then replays from the durable log."""

    def __init__(self, capacity: int) -> None:
        self._queue: asyncio.Queue[FeedEvent] = asyncio.Queue(maxsize=capacity)
        self.lagged = False

    def offer(self, event: FeedEvent) -> None:
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.lagged = True

    async def next(self, timeout: float) -> FeedEvent | None:
        """The next live event, or None when `timeout` seconds pass without one."""
        try:
            return await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return None


class FeedHub:
    """Delivers committed events to the subscriptions of their session (one event loop)."""

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._subscriptions: dict[str, set[Subscription]] = defaultdict(set)

    def subscribe(self, session_id: str) -> Subscription:
        subscription = Subscription(self._capacity)
        self._subscriptions[session_id].add(subscription)
        return subscription

    def unsubscribe(self, session_id: str, subscription: Subscription) -> None:
        watchers = self._subscriptions.get(session_id)
        if watchers is None:
            return
        watchers.discard(subscription)
        if not watchers:
            del self._subscriptions[session_id]

    def publish(self, session_id: str, event: FeedEvent) -> None:
        for subscription in tuple(self._subscriptions.get(session_id, ())):
            subscription.offer(event)

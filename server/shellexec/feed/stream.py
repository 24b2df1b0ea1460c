"""A watcher's stream: the durable log replayed, then live events, with heartbeats.

The stream opens with a heartbeat naming the revision the replay starts after, replays the
log from there, then follows the hub. A quiet period, a lagged queue or a gap in revisions
sends it back to the log, which is the truth; the hub only wakes it (ADR 0004). It ends with
`end_of_stream` when its lifetime runs out or the hub closes, and with `session_deleted` when
the session is deleted. A replay that finds the events it needs compacted away sends `reset`
(carrying the session's latest revision) and ends: the watcher reloads the state (ADR 0062).
A replay may also end the stream itself, with `session_deleted` when the session is gone or
`end_of_stream` when the watcher's token was revoked; a stream of live events replays at
least once a heartbeat interval, so those checks reach it too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from shellexec.feed.hub import FeedEvent, FeedHub, Subscription
from shellexec.vocabulary import (
    EVENT_END_OF_STREAM,
    EVENT_HEARTBEAT,
    EVENT_RESET,
    EVENT_SESSION_DELETED,
)

# Events a replay may return that end the stream: `reset` (the watcher reloads the state and
# watches anew), `session_deleted` (the replay found the session gone) and `end_of_stream`
# (the watcher may no longer read it: its token was revoked).
_LAST_EVENTS = frozenset((EVENT_RESET, EVENT_SESSION_DELETED, EVENT_END_OF_STREAM))


@dataclass(frozen=True, slots=True)
class LogBatch:
    """One read of the durable log: its events, oldest first, bounded in count and bytes
    (REPLAY_BATCH_EVENTS, REPLAY_BATCH_BYTES; a watcher stalled mid-replay holds one, ADR
    0046 and 0133); whether the log holds later events the read left out; and the revision
    the read reached, where the next read starts (past an event whose row was gone)."""

    events: Sequence[FeedEvent]
    more: bool = False
    reached: int = 0


# The next logged events of the session after a revision.
ReadEvents = Callable[[int], Awaitable[LogBatch]]


async def _replay(read_events: ReadEvents, after: int,
                  subscription: Subscription) -> AsyncIterator[FeedEvent]:
    while not subscription.closed:
        batch = await read_events(after)
        for event in batch.events:
            yield event
        if not batch.more:
            return
        after = batch.reached
        await asyncio.sleep(0)


async def follow(hub: FeedHub, session_id: str, subscription: Subscription, last: int,
                 read_events: ReadEvents, *, heartbeat_seconds: float,
                 lifetime_seconds: float) -> AsyncGenerator[FeedEvent, None]:
    """The session's events after revision `last`, from `subscription` (already subscribed,
    so nothing committed meanwhile is missed); unsubscribes when the stream ends."""
    deadline = time.monotonic() + lifetime_seconds
    try:
        # Answer at once, before any replay, so the watcher knows the stream is open; it
        # names the revision the replay starts after, never a later one, so a client that
        # drops mid-replay resumes from it without missing an event.
        yield FeedEvent(EVENT_HEARTBEAT, last)
        async for replayed in _replay(read_events, last, subscription):
            yield replayed
            if replayed.type in _LAST_EVENTS:
                return
            last = replayed.revision
        replayed_at = time.monotonic()
        while (remaining := deadline - time.monotonic()) > 0 and not subscription.closed:
            event = await subscription.next(min(heartbeat_seconds, remaining))
            if subscription.closed:
                break
            stale = time.monotonic() - replayed_at >= heartbeat_seconds
            if event is None or subscription.lagged or event.revision > last + 1 or stale:
                # A quiet period, a lagged queue or a gap: the durable log is the truth. A
                # stream of live events reads it too, once a heartbeat interval, so that what
                # a replay checks (the session, the watcher's token) holds for it as well.
                subscription.lagged = False
                replayed_at = time.monotonic()
                async for missed in _replay(read_events, last, subscription):
                    yield missed
                    if missed.type in _LAST_EVENTS:
                        return
                    last = missed.revision
                if event is None and deadline - time.monotonic() > 0:
                    yield FeedEvent(EVENT_HEARTBEAT, last)
                continue
            if event.revision == last + 1:
                last = event.revision
                yield event
        yield FeedEvent(subscription.final_type or EVENT_END_OF_STREAM, last)
    finally:
        hub.unsubscribe(session_id, subscription)

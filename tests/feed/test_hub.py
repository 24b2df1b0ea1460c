"""A watcher's queue of live events: bounded, and emptied when it overflows (ADR 0046)."""

from __future__ import annotations

import asyncio

from shellexec.feed import FeedEvent, FeedHub
from shellexec.vocabulary import EVENT_MESSAGE_UPDATED


def event(revision: int) -> FeedEvent:
    return FeedEvent(EVENT_MESSAGE_UPDATED, revision)


async def drained(hub: FeedHub, session_id: str, offered: int) -> tuple[bool, list[int]]:
    """Offers `offered` events to one subscription, then reads what it holds."""
    subscription = hub.subscribe(session_id)
    for revision in range(1, offered + 1):
        hub.broadcast(session_id, event(revision))
    held = []
    while (next_event := await subscription.next(0.05)) is not None:
        held.append(next_event.revision)
    return subscription.lagged, held


def test_a_queue_within_its_capacity_holds_every_event() -> None:
    assert asyncio.run(drained(FeedHub(capacity=4), "s", 4)) == (False, [1, 2, 3, 4])


def test_an_overflowing_queue_is_emptied_but_for_the_event_that_wakes_its_watcher() -> None:
    # The watcher replays from the log; the queue holds nothing more meanwhile.
    assert asyncio.run(drained(FeedHub(capacity=4), "s", 1000)) == (True, [5])

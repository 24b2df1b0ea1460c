"""A watcher's queue of live events: bounded by count and by the weight of its events, and
emptied when it overflows (ADR 0046, ADR 0133)."""

from __future__ import annotations

import asyncio

from shellexec.feed import FeedEvent, FeedHub
from shellexec.feed.hub import event_weight
from shellexec.vocabulary import EVENT_MESSAGE_UPDATED

from support.views import shell_view

# An event whose message carries three 100,000-character texts: about 300 KB.
HEAVY_COMMAND = "x" * 100_000


def event(revision: int, command: str | None = None) -> FeedEvent:
    view = None if command is None else shell_view(command)
    return FeedEvent(EVENT_MESSAGE_UPDATED, revision, view)


async def drained(hub: FeedHub, session_id: str, offered: int,
                  command: str | None = None) -> tuple[bool, list[int]]:
    """Offers `offered` events to one subscription, then reads what it holds."""
    subscription = hub.subscribe(session_id)
    for revision in range(1, offered + 1):
        hub.broadcast(session_id, event(revision, command))
    held = []
    while (next_event := await subscription.next(0.05)) is not None:
        held.append(next_event.revision)
    return subscription.lagged, held


def test_a_queue_within_its_capacity_holds_every_event() -> None:
    assert asyncio.run(drained(FeedHub(capacity=4), "s", 4)) == (False, [1, 2, 3, 4])


def test_an_overflowing_queue_is_emptied_but_for_the_event_that_wakes_its_watcher() -> None:
    # The watcher replays from the log; the queue holds nothing more meanwhile.
    assert asyncio.run(drained(FeedHub(capacity=4), "s", 1000)) == (True, [5])


def test_a_queue_of_heavy_events_overflows_by_weight_before_its_count() -> None:
    weight = event_weight(event(1, HEAVY_COMMAND))
    hub = FeedHub(capacity=1000, capacity_bytes=3 * weight)
    assert asyncio.run(drained(hub, "s", 3, HEAVY_COMMAND)) == (False, [1, 2, 3])
    # The fourth would pass the weight: the queue is emptied, its watcher replays.
    assert asyncio.run(drained(hub, "s", 4, HEAVY_COMMAND)) == (True, [4])


def test_events_taken_from_the_queue_no_longer_count_against_its_weight() -> None:
    async def scenario() -> tuple[bool, list[int]]:
        hub = FeedHub(capacity=1000, capacity_bytes=2 * event_weight(event(1, HEAVY_COMMAND)))
        subscription = hub.subscribe("s")
        taken = []
        for revision in range(1, 11):  # ten heavy events, never more than two queued
            hub.broadcast("s", event(revision, HEAVY_COMMAND))
            if revision % 2 == 0:
                taken += [(await subscription.next(1)), (await subscription.next(1))]
        return subscription.lagged, [item.revision for item in taken if item is not None]

    assert asyncio.run(scenario()) == (False, list(range(1, 11)))


def test_a_watcher_cancelled_as_its_next_event_arrives_is_cancelled() -> None:
    """The stream's client went away just as an event came: `asyncio.wait_for` (Python 3.11)
    returned the event and dropped the cancellation, so the stream held its place among its
    caller's feeds until the next heartbeat's write failed."""
    async def scenario() -> bool:
        hub = FeedHub()
        subscription = hub.subscribe("s")
        waiting = asyncio.create_task(subscription.next(60))
        await asyncio.sleep(0)  # waiting for its next event
        hub.broadcast("s", event(1))
        waiting.cancel()  # in the same turn of the loop as the event
        try:
            await waiting
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(scenario())

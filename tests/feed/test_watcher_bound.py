"""Each caller holds a bounded number of feed subscriptions (ADR 0135): the one past the bound
is refused before anything is subscribed, a subscription counts from subscribe to unsubscribe
whatever ends its stream, and a count never leaks nor is given back twice.

The pure parts, in process; tests/service/test_watcher_bound.py shows the same through Envoy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import pytest

from shellexec.feed import FeedEvent, FeedHub, WatcherBoundError
from shellexec.feed.stream import LogBatch, ReadEvents, follow
from shellexec.feed.watcher_counts import WatcherCounts
from shellexec.rules.limits import MAX_WATCHERS_PER_CALLER
from shellexec.vocabulary import (
    EVENT_END_OF_STREAM,
    EVENT_HEARTBEAT,
    EVENT_MESSAGE_ADDED,
    EVENT_RESET,
    EVENT_SESSION_DELETED,
)

from support.views import shell_view


def test_counts_refuse_past_the_bound_and_free_a_place_per_give_back() -> None:
    counts = WatcherCounts(per_owner=2)
    counts.take("a")
    counts.take("a")
    with pytest.raises(WatcherBoundError) as refused:
        counts.take("a")
    assert refused.value.bound == 2
    assert counts.held("a") == 2  # the refusal counted nothing
    counts.take("b")  # another owner has places of its own
    counts.give_back("a")
    counts.take("a")
    assert (counts.held("a"), counts.held("b")) == (2, 1)


def test_an_owner_holding_nothing_has_no_entry_and_a_stray_give_back_frees_nothing() -> None:
    counts = WatcherCounts(per_owner=1)
    counts.take("a")
    counts.give_back("a")
    counts.give_back("a")  # more than it took: ignored, never a negative count
    assert (counts.held("a"), counts.owners) == (0, 0)
    counts.take("a")
    with pytest.raises(WatcherBoundError):
        counts.take("a")


def test_a_bound_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        WatcherCounts(per_owner=0)


def test_the_hub_s_default_bound_is_the_limit() -> None:
    hub = FeedHub()
    for _ in range(MAX_WATCHERS_PER_CALLER):
        hub.subscribe("s", "caller")
    with pytest.raises(WatcherBoundError):
        hub.subscribe("s", "caller")


def test_a_refused_subscription_subscribes_nothing_and_is_counted() -> None:
    refusals: list[None] = []
    hub = FeedHub(per_owner=1, on_refused=lambda: refusals.append(None))
    hub.subscribe("s1", "caller")
    with pytest.raises(WatcherBoundError):
        hub.subscribe("s2", "caller")
    assert not hub.watched("s2")
    assert (hub.watchers, hub.held_by("caller"), len(refusals)) == (1, 1, 1)
    hub.subscribe("s2", "other")  # another caller is not affected
    assert (hub.watchers, len(refusals)) == (2, 1)


def test_unsubscribing_frees_the_place_once() -> None:
    hub = FeedHub(per_owner=2)
    first = hub.subscribe("s", "caller")
    hub.subscribe("s", "caller")
    hub.unsubscribe("s", first)
    hub.unsubscribe("s", first)  # again (a stream's end and its error path both call it)
    assert hub.held_by("caller") == 1
    hub.subscribe("s", "caller")
    with pytest.raises(WatcherBoundError):
        hub.subscribe("s", "caller")


def test_after_many_cycles_the_full_number_opens_again() -> None:
    hub = FeedHub(per_owner=8)
    for cycle in range(50):
        opened = [hub.subscribe(f"s{cycle % 3}", "caller") for _ in range(8)]
        with pytest.raises(WatcherBoundError):
            hub.subscribe("s0", "caller")
        for subscription in opened:
            hub.unsubscribe(f"s{cycle % 3}", subscription)
    assert (hub.held_by("caller"), hub.watchers) == (0, 0)


# A stream's every way of ending goes through `follow`'s unsubscribe: each is played here on
# a bound of one, and the caller must be able to open its one stream again afterwards.

def _log(*events: FeedEvent) -> ReadEvents:
    async def read_events(after: int) -> LogBatch:
        return LogBatch([event for event in events if event.revision > after])

    return read_events


def _stream(hub: FeedHub, *events: FeedEvent, lifetime: float = 30.0,
            session_id: str = "s") -> AsyncGenerator[FeedEvent, None]:
    subscription = hub.subscribe(session_id, "caller")
    return follow(hub, session_id, subscription, 0, _log(*events),
                  heartbeat_seconds=30.0, lifetime_seconds=lifetime)


async def _reopens(hub: FeedHub) -> bool:
    """Whether the caller can open its one stream now (and closes it again)."""
    try:
        again = hub.subscribe("s", "caller")
    except WatcherBoundError:
        return False
    hub.unsubscribe("s", again)
    return True


def _added(revision: int) -> FeedEvent:
    return FeedEvent(EVENT_MESSAGE_ADDED, revision, shell_view("ls"))


@pytest.mark.parametrize("last", [EVENT_SESSION_DELETED, EVENT_RESET, EVENT_END_OF_STREAM])
def test_a_stream_a_replay_ends_frees_its_place(last: str) -> None:
    """Deleted (`session_deleted`), compacted away (`reset`) or its token revoked
    (`end_of_stream` from the replay)."""
    async def scenario() -> tuple[list[str], bool, bool]:
        hub = FeedHub(per_owner=1)
        stream = _stream(hub, _added(1), FeedEvent(last, 1))
        held = not await _reopens(hub)
        types = [event.type async for event in stream]
        return types, held, await _reopens(hub)

    assert asyncio.run(scenario()) == ([EVENT_HEARTBEAT, EVENT_MESSAGE_ADDED, last], True, True)


def test_a_stream_whose_lifetime_ends_frees_its_place() -> None:
    async def scenario() -> tuple[list[str], bool]:
        hub = FeedHub(per_owner=1)
        stream = _stream(hub, lifetime=0.0)
        return [event.type async for event in stream], await _reopens(hub)

    assert asyncio.run(scenario()) == ([EVENT_HEARTBEAT, EVENT_END_OF_STREAM], True)


def test_a_stream_ended_by_its_session_s_deletion_or_the_server_stopping_frees_its_place(
        ) -> None:
    async def scenario() -> tuple[list[str], list[str], bool]:
        hub = FeedHub(per_owner=2)
        deleted = _stream(hub)
        stopped = _stream(hub, session_id="other")
        assert (await anext(deleted)).type == EVENT_HEARTBEAT
        assert (await anext(stopped)).type == EVENT_HEARTBEAT
        reading = asyncio.ensure_future(anext(deleted))
        await asyncio.sleep(0)  # the stream waits for its next live event
        hub.finish("s", EVENT_SESSION_DELETED)
        first = [(await reading).type] + [event.type async for event in deleted]
        hub.close()
        second = [event.type async for event in stopped]
        return first, second, hub.held_by("caller") == 0

    assert asyncio.run(scenario()) == ([EVENT_SESSION_DELETED], [EVENT_END_OF_STREAM], True)


def test_a_stream_closed_by_its_reader_frees_its_place() -> None:
    """A client that cancels, and a watcher the servicer ends because it stopped reading:
    both close the generator mid-stream."""
    async def scenario() -> tuple[bool, bool]:
        hub = FeedHub(per_owner=1)
        stream = _stream(hub, _added(1))
        assert (await anext(stream)).type == EVENT_HEARTBEAT
        assert (await anext(stream)).type == EVENT_MESSAGE_ADDED
        held = not await _reopens(hub)
        await stream.aclose()
        return held, await _reopens(hub)

    assert asyncio.run(scenario()) == (True, True)

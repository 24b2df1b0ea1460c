"""A replay reads the durable log in bounded batches and reads on while a batch says the log
holds more (ADR 0133): a batch cut by its bytes is not the end of the log, and a batch whose
last events were left out (their rows gone) still moves the replay past them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from shellexec.feed import FeedEvent, FeedHub
from shellexec.feed.stream import LogBatch, follow
from shellexec.vocabulary import EVENT_HEARTBEAT, EVENT_MESSAGE_UPDATED

# Far longer than the test waits: a replay that stopped early would only read on at the
# next heartbeat, and the test would time out instead.
HEARTBEAT_SECONDS = 3600.0


class Log:
    """Revisions 1..`latest` in batches of `size`, leaving out the revisions in `gone`."""

    def __init__(self, latest: int, size: int, gone: Sequence[int] = ()) -> None:
        self.latest, self.size, self.gone = latest, size, set(gone)
        self.reads: list[int] = []

    async def read(self, after: int) -> LogBatch:
        self.reads.append(after)
        revisions = list(range(after + 1, min(after + self.size, self.latest) + 1))
        events = [FeedEvent(EVENT_MESSAGE_UPDATED, revision)
                  for revision in revisions if revision not in self.gone]
        return LogBatch(events, more=bool(revisions) and revisions[-1] < self.latest,
                        reached=revisions[-1] if revisions else after)


async def replayed(log: Log, count: int) -> list[int]:
    """The revisions of the first `count` events a new watcher from revision 0 receives."""
    hub = FeedHub()
    subscription = hub.subscribe("s")
    stream = follow(hub, "s", subscription, 0, log.read,
                    heartbeat_seconds=HEARTBEAT_SECONDS, lifetime_seconds=HEARTBEAT_SECONDS)
    received = []
    try:
        for _ in range(count):
            event = await asyncio.wait_for(anext(stream), 10)
            received.append((event.type, event.revision))
    finally:
        await stream.aclose()
    assert received[0] == (EVENT_HEARTBEAT, 0)
    return [revision for _, revision in received[1:]]


def test_a_replay_reads_every_batch_the_log_holds_before_waiting() -> None:
    log = Log(latest=10, size=3)
    assert asyncio.run(replayed(log, 11)) == list(range(1, 11))
    assert log.reads == [0, 3, 6, 9]


def test_a_replay_moves_past_a_batch_whose_events_were_all_left_out() -> None:
    log = Log(latest=9, size=3, gone=(4, 5, 6))
    assert asyncio.run(replayed(log, 7)) == [1, 2, 3, 7, 8, 9]
    assert log.reads == [0, 3, 6]

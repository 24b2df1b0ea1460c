"""What one caller's feed replays may read of the durable log (ADR 0133), on a clock of the
test's own: a burst at once, then a rate, however many watchers replay at once; a first read
(a live watcher's) never queues behind the caller's long replays, yet first reads alone are
held to the rate too; nothing for calls without a token; and, through a real Reader, the
replays of a token's watchers are spaced out while another caller's are not."""

from __future__ import annotations

import asyncio
from pathlib import Path

from service.test_pacing import Time

from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.projection import Masking
from shellexec.rules.limits import REPLAY_BATCH_BYTES
from shellexec.service import Caller, Reader, system_clock
from shellexec.service.replay_pacing import ReplayPace
from shellexec.service.tokens import Tokens
from shellexec.vocabulary import SCOPE_READ

from support.acp import codex_start

MIB = 1024 * 1024


def _pace(time: Time, waits: list[float]) -> ReplayPace:
    return ReplayPace(time.clock, time.sleep, rate_bytes=1 * MIB, burst_bytes=4 * MIB,
                      on_wait=waits.append)


async def _read(pace: ReplayPace, caller: str, weight: int, reading_on: bool = True) -> None:
    reserved = await pace.reserve(caller, reading_on=reading_on)
    await asyncio.sleep(0)  # the read, in a reader thread
    pace.settle(caller, reserved, weight)


def _reads_in_turn(pace: ReplayPace, caller: str, count: int, weight: int,
                   reading_on: bool = True) -> None:
    """`count` reads of one watcher, one after another."""
    async def reads() -> None:
        for _ in range(count):
            await _read(pace, caller, weight, reading_on)

    asyncio.run(reads())


def test_replays_within_the_burst_never_wait_and_leave_nothing_behind() -> None:
    time, waits = Time(), list[float]()
    pace = _pace(time, waits)

    _reads_in_turn(pace, "dashboard", 3, MIB)
    assert waits == []
    time.now += 10  # drained
    assert pace.debt("dashboard") == 0
    asyncio.run(_read(pace, "dashboard", 0))
    assert pace._callers == {}


def test_a_first_read_does_not_queue_behind_the_caller_s_long_replays() -> None:
    """A live watcher's read once a heartbeat interval waited for every long replay of its
    own token: its events came seconds late."""

    async def check() -> None:
        time, released = Time(), asyncio.Event()

        async def held_sleep(seconds: float) -> None:  # until the test lets the time pass
            await released.wait()
            time.now += seconds

        pace = ReplayPace(time.clock, held_sleep, rate_bytes=1 * MIB, burst_bytes=4 * MIB)
        await _read(pace, "dashboard", 5 * MIB)  # past the burst: long replays now wait
        long_replays = [asyncio.ensure_future(_read(pace, "dashboard", MIB))
                        for _ in range(4)]
        await asyncio.sleep(0)  # one holds the turn, waiting; the others queue behind it
        reserved = await asyncio.wait_for(pace.reserve("dashboard", reading_on=False), 10)
        assert not any(replay.done() for replay in long_replays)
        pace.settle("dashboard", reserved, 0)
        released.set()
        await asyncio.gather(*long_replays)
        assert time.now > 0

    asyncio.run(check())


def test_first_reads_alone_are_held_to_the_rate_past_twice_the_burst() -> None:
    """Reopening feeds to read only first batches does not get around the pace."""
    time, waits = Time(), list[float]()
    pace = _pace(time, waits)

    _reads_in_turn(pace, "churner", 64, MIB, reading_on=False)
    assert time.now >= (64 * MIB - 2 * 4 * MIB - MIB) / MIB
    assert pace.debt("churner") <= 2 * 4 * MIB + MIB


def test_first_reads_past_twice_the_burst_pass_one_at_a_time() -> None:
    """Sixteen feeds' first reads waited together and passed together, a batch each past the
    bound at every wake-up."""
    time, waits = Time(), list[float]()
    pace = _pace(time, waits)

    async def check() -> None:
        await _read(pace, "churner", 9 * MIB, reading_on=False)  # past twice the burst
        reserved = await asyncio.gather(*(pace.reserve("churner", reading_on=False)
                                          for _ in range(16)))
        assert reserved == [REPLAY_BATCH_BYTES] * 16  # each queued and reserved
        assert time.now >= 16 * REPLAY_BATCH_BYTES / MIB  # one batch a second past the bound
        for each in reserved:
            pace.settle("churner", each, MIB)

    asyncio.run(check())


def test_a_caller_that_left_owing_is_forgotten_once_its_debt_drained() -> None:
    time, waits = Time(), list[float]()
    pace = _pace(time, waits)
    for caller in ("gone-1", "gone-2"):
        asyncio.run(_read(pace, caller, MIB))
    assert set(pace._callers) == {"gone-1", "gone-2"}  # they left owing
    time.now += 10
    for _ in range(2):
        asyncio.run(_read(pace, "other", 0))
    assert set(pace._callers) <= {"other"}


def test_many_watchers_of_one_caller_read_at_its_rate_past_the_burst() -> None:
    time, waits = Time(), list[float]()
    pace = _pace(time, waits)
    watchers, batches = 16, 8

    async def replay() -> None:
        for _ in range(batches):
            await _read(pace, "replayer", MIB)

    async def all_at_once() -> None:
        await asyncio.gather(*(replay() for _ in range(watchers)))

    asyncio.run(all_at_once())
    read = watchers * batches * MIB
    # Past the burst, at the rate: the last reservation may still be owed.
    assert time.now >= (read - 4 * MIB - REPLAY_BATCH_BYTES) / MIB
    assert sum(waits) == time.now
    assert pace.debt("replayer") <= 4 * MIB + REPLAY_BATCH_BYTES


def test_calls_without_a_token_are_not_paced() -> None:
    time, waits = Time(), list[float]()
    pace = _pace(time, waits)

    _reads_in_turn(pace, "", 64, MIB)
    assert (waits, pace._callers) == ([], {})


def test_a_cancelled_read_is_charged_a_whole_batch() -> None:
    time, waits = Time(), list[float]()
    pace = _pace(time, waits)

    async def cancelled(reading_on: bool) -> None:
        reserved = await pace.reserve("quitter", reading_on=reading_on)
        pace.settle("quitter", reserved, None)  # its thread may still be reading

    asyncio.run(cancelled(True))
    assert pace.debt("quitter") == REPLAY_BATCH_BYTES
    asyncio.run(cancelled(False))
    assert pace.debt("quitter") == 2 * REPLAY_BATCH_BYTES


def test_a_token_s_replays_are_spaced_out_and_another_caller_s_are_not(tmp_path: Path) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'replay.db'}"))
    time, waits = Time(), list[float]()
    reader = Reader(app.database, app.feed, 15.0, 3600.0, masking=Masking(),
                    replay_pace=ReplayPace(time.clock, time.sleep, rate_bytes=64 * 1024,
                                           burst_bytes=64 * 1024, on_wait=waits.append))
    Tokens(app.database, system_clock).create("replayer", [SCOPE_READ], [])
    replayer = Caller("replayer", frozenset({SCOPE_READ}))

    async def replay(session_id: str, caller: Caller) -> int:
        last = (await app.sessions.get(session_id)).revision
        async for event in await reader.watch(session_id, 0, caller=caller):
            if event.revision >= last:
                return event.revision
        raise AssertionError("the stream ended early")

    async def check() -> None:
        session = await app.sessions.create("replay-task", "codex")
        for index in range(300):  # about 400 KiB of events: several batches
            await app.publisher.publish(session.id, codex_start(f"c{index}", "x" * 1000), None)
        await asyncio.gather(*(replay(session.id, replayer) for _ in range(4)))
        assert waits, "four replays of 400 KiB past a 64 KiB burst never waited"
        paced = len(waits)
        await replay(session.id, Caller("", frozenset({SCOPE_READ})))
        assert len(waits) == paced  # no token: not paced

    try:
        asyncio.run(check())
    finally:
        app.database.close()

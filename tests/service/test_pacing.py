"""What one caller's publishes may take of the writer (ADR 0148), on a clock of the test's own:
a publish's time past its free part is the caller's debt, which drains at the caller's share,
and a caller past its burst waits until it is back within it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.rules.limits import MAX_STORED_TEXT_BYTES
from shellexec.service import Caller
from shellexec.service.pacing import WriterPace
from shellexec.vocabulary import EVENT_MESSAGE_ADDED, SCOPE_INGEST

from support.acp import agent_text
from support.metrics import scrape, value
from support.rest import unique
from support.stack import Stack, free_port


class Time:
    """A clock that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _pace(time: Time) -> tuple[WriterPace, list[float]]:
    waits: list[float] = []
    pace = WriterPace(time.clock, time.sleep, free_seconds=0.002, share=0.25,
                      burst_seconds=0.5, max_in_flight=4, on_wait=waits.append)
    return pace, waits


async def _publish(pace: WriterPace, time: Time, caller: str, cost: float) -> None:
    """One publish: waits for its turn, then its unit runs (the writer runs one at a time)."""
    turn = await pace.enter(caller)
    time.now += cost
    pace.leave(caller, cost, turn)


def test_usual_publishes_never_wait_and_leave_nothing_behind() -> None:
    time = Time()
    pace, waits = _pace(time)

    async def publish_all() -> None:
        for _ in range(10_000):
            await _publish(pace, time, "bridge", 0.0015)  # under the free part

    asyncio.run(publish_all())
    assert waits == []
    assert pace._callers == {}  # nothing left to remember of the caller


def test_a_caller_past_its_burst_waits_until_its_debt_drains_back_to_it() -> None:
    time = Time()
    pace, waits = _pace(time)

    async def check() -> None:
        await _publish(pace, time, "costly", 0.402)  # 0.4 owed: within the burst
        assert waits == []
        await _publish(pace, time, "costly", 0.302)  # about 0.6 owed now
        assert waits == []
        owed = pace.debt("costly")
        turn = await pace.enter("costly")  # past the burst: drained at 0.25 a second
        assert turn
        assert waits == [pytest.approx((owed - 0.5) / 0.25)]
        assert pace.debt("costly") == pytest.approx(0.5)
        pace.leave("costly", 0.0, turn)
        # Another caller owes nothing and never waits for the first one's debt.
        assert not await pace.enter("other")
        pace.leave("other", 0.0, False)
        assert len(waits) == 1

    asyncio.run(check())


def test_debt_drains_with_time_and_is_forgotten_once_paid() -> None:
    time = Time()
    pace, _ = _pace(time)
    asyncio.run(_publish(pace, time, "a", 0.102))
    time.now += 0.2
    assert pace.debt("a") == pytest.approx(0.05)
    time.now += 1.0
    assert pace.debt("a") == 0.0
    asyncio.run(_publish(pace, time, "a", 0.001))
    assert pace._callers == {}


def test_calls_without_a_token_are_not_paced() -> None:
    time = Time()
    pace, waits = _pace(time)

    async def publish_all() -> None:
        await asyncio.gather(*(_publish(pace, time, "", 0.15) for _ in range(20)))

    asyncio.run(publish_all())
    assert waits == []
    assert pace._callers == {}


@pytest.mark.parametrize("publishers", [1, 16, 64])
def test_a_caller_s_costly_publishes_take_at_most_its_share_however_many_at_once(
        publishers: int) -> None:
    """Publishes of 150 ms each, from many publishers at once: the first version looked at
    the debt before the units ran and charged it after, so all of them went at once, and
    then all again after one shared wait. Now, past the burst and the publishes that may be
    at the writer before any is charged, what they owe takes a quarter of the time."""
    time = Time()
    pace, _ = _pace(time)
    cost, rounds = 0.15, 120 // publishers
    at_once = [0]
    most_at_once = [0]

    async def publisher() -> None:
        for _ in range(rounds):
            turn = await pace.enter("costly")
            at_once[0] += 1
            most_at_once[0] = max(most_at_once[0], at_once[0])
            await asyncio.sleep(0)  # others may enter now: only the pace holds them
            time.now += cost
            at_once[0] -= 1
            pace.leave("costly", cost, turn)

    async def publish_all() -> None:
        await asyncio.gather(*(publisher() for _ in range(publishers)))

    asyncio.run(publish_all())
    owed = publishers * rounds * (cost - 0.002)
    assert owed <= 0.5 + 4 * cost + 0.25 * time.now
    assert most_at_once[0] <= 4
    assert pace._callers == {} or pace.debt("costly") > 0


# A chat message of 256 KiB of coloured assignments: costly to mask, and masked again for the
# feed and the answer on every chunk appended to it.
COSTLY_TEXT = ("\x1b[32mTOKEN\x1b[0m=abc\x1b[0m\n" * 20_000)[:MAX_STORED_TEXT_BYTES - 4096]


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_costly_chat_chunks_of_one_token_are_paced_through_the_front_door(
        stack_with: Callable[..., Stack]) -> None:
    """Sixteen such publishers of one token raised every other caller's p99 to 2.5 s."""
    stack = stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_METRICS_PORT=str(free_port()))
    api = stack.api_as(stack.create_token(unique("chatty"), "ingest"))
    session_id = api.new_session()["id"]
    api.start_turn(session_id)
    api.publish(session_id, agent_text(COSTLY_TEXT))
    for chunk in range(200):
        assert "message" not in api.publish(session_id, agent_text(f" {chunk}"))
        if value(scrape(stack), "shellexec_publish_paced_seconds_total") > 0:
            break
    else:
        pytest.fail("200 costly publishes of one token were never paced")


def test_a_cancelled_publish_is_still_charged_and_announced(tmp_path: Path) -> None:
    """The unit of a cancelled publish is written all the same: it left the pace uncharged,
    so a caller cancelling each of its calls was never paced, and its event was never
    announced to live watchers."""
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'pace.db'}"))
    caller = Caller("chatty", frozenset({SCOPE_INGEST}))

    async def check() -> None:
        session = await app.sessions.create("pace-task", "codex")
        await app.sessions.start_turn(session.id)
        watcher = app.feed.subscribe(session.id)
        publish = asyncio.ensure_future(app.publisher.publish(
            session.id, agent_text(COSTLY_TEXT), None, caller=caller))
        await asyncio.sleep(0)  # entered, and its unit queued
        publish.cancel()
        event = await watcher.next(60)
        assert event is not None
        assert event.type == EVENT_MESSAGE_ADDED
        assert app.publisher._pace.debt("chatty") > 0
        watcher.close()

    try:
        asyncio.run(check())
    finally:
        app.database.close()

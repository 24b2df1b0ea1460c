"""What one caller's publishes may take of the writer (ADR 0148), on a clock of the test's own:
a publish's time past its free part is the caller's debt, which drains at the caller's share,
and a caller past its burst waits until it is back within it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from shellexec.rules.limits import MAX_STORED_TEXT_BYTES
from shellexec.service.pacing import WriterPace

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
                      burst_seconds=0.5, on_wait=waits.append)
    return pace, waits


def test_usual_publishes_never_wait() -> None:
    time = Time()
    pace, waits = _pace(time)
    for _ in range(10_000):
        asyncio.run(pace.wait("bridge"))
        pace.charge("bridge", 0.0015)  # under the free part
    assert pace.debt("bridge") == 0.0
    assert waits == []


def test_a_caller_past_its_burst_waits_until_its_debt_drains_back_to_it() -> None:
    time = Time()
    pace, waits = _pace(time)
    pace.charge("costly", 0.402)  # 0.4 owed: within the burst
    asyncio.run(pace.wait("costly"))
    assert waits == []
    assert not pace.must_wait("costly")
    pace.charge("costly", 0.302)
    assert pace.must_wait("costly")  # 0.7 owed: 0.2 past the burst, drained at 0.25 a second
    asyncio.run(pace.wait("costly"))
    assert waits == [pytest.approx(0.2 / 0.25)]
    assert pace.debt("costly") == pytest.approx(0.5)
    # Another caller owes nothing and never waits for the first one's debt.
    asyncio.run(pace.wait("other"))
    assert len(waits) == 1


def test_debt_drains_with_time_and_is_forgotten_once_paid() -> None:
    time = Time()
    pace, _ = _pace(time)
    pace.charge("a", 0.102)
    time.now += 0.2
    assert abs(pace.debt("a") - 0.05) < 1e-9
    time.now += 1.0
    assert pace.debt("a") == 0.0
    assert pace._debts == {}  # nothing left to remember of the caller


def test_a_caller_s_costly_publishes_take_at_most_its_share_over_time() -> None:
    """Sixty publishes of 150 ms each, sent as fast as allowed: beyond the burst (and the
    one publish that goes past it), what they owe takes a quarter of the time that passes."""
    time = Time()
    pace, _ = _pace(time)

    async def publish_all() -> None:
        for _ in range(60):
            await pace.wait("costly")
            time.now += 0.15  # the unit runs
            pace.charge("costly", 0.15)

    asyncio.run(publish_all())
    owed = 60 * (0.15 - 0.002)
    assert owed <= 0.5 + 0.15 + 0.25 * time.now
    assert time.now > 60 * 0.15 * 3  # without the pace: 9 s


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

"""Callers take turns at the conversion workers: a burst of one caller's large requests holds
another caller's next request for one of the burst's, not for all of them."""

from __future__ import annotations

import asyncio

import pytest

from shellexec.api.caller_turns import CallerTurns


async def _settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_slot_needs_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        CallerTurns(0)


def test_callers_waiting_are_served_one_request_each_in_turn() -> None:
    async def check() -> list[str]:
        turns = CallerTurns(1)
        served: list[str] = []
        await turns.take("burst")  # the worker is busy with the burst's first request

        async def request(caller: str, name: str) -> None:
            await turns.take(caller)
            served.append(name)
            turns.give_back()

        burst = [asyncio.ensure_future(request("burst", f"b{n}")) for n in range(1, 6)]
        await _settled()
        other = asyncio.ensure_future(request("other", "o1"))
        await _settled()
        assert turns.waiting() == 6
        turns.give_back()  # the first request of the burst is done
        await asyncio.gather(*burst, other)
        return served

    # First come, first served would have put o1 last.
    assert asyncio.run(check()) == ["b1", "o1", "b2", "b3", "b4", "b5"]


def test_a_cancelled_request_gives_its_turn_or_its_slot_back() -> None:
    async def check() -> None:
        turns = CallerTurns(1)
        await turns.take("a")
        waiting = asyncio.ensure_future(turns.take("b"))
        await _settled()
        waiting.cancel()
        await _settled()
        assert turns.waiting() == 0
        handed = asyncio.ensure_future(turns.take("c"))
        await _settled()
        turns.give_back()  # c is handed the slot ...
        handed.cancel()  # ... and cancelled before it runs: the slot comes back
        await _settled()
        assert turns.holders == 0
        await asyncio.wait_for(turns.take("d"), 1)
        assert turns.holders == 1

    asyncio.run(check())

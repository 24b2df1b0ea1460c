"""The request budget's arithmetic and its waiting line (ADR 0140), on its own: a call reserves
a message's worth, holds its message's size once it has arrived, and waits while that does not
fit the server's budget or its caller's share; a caller at its share never holds up another."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import pytest

from shellexec.api.auth import FRONT_DOOR_CHECKS, FRONT_DOOR_PROBE
from shellexec.api.request_budget import Admission, RequestBudget
from shellexec.service import Caller, ResourceExhaustedError

T = TypeVar("T")

MESSAGE = 100  # a reservation: the largest message
SHARE = 2 * MESSAGE
TOTAL = 3 * MESSAGE


def _budget() -> RequestBudget:
    return RequestBudget(TOTAL, SHARE, MESSAGE)


async def _settled() -> None:
    """Lets every task that can run do so."""
    for _ in range(5):
        await asyncio.sleep(0)


async def _pending(awaitable: Awaitable[T]) -> asyncio.Task[T]:
    task = asyncio.ensure_future(awaitable)
    await _settled()
    return task


def test_a_reservation_must_fit_a_share_and_a_share_the_total() -> None:
    with pytest.raises(ValueError, match="must fit"):
        RequestBudget(TOTAL, SHARE, SHARE + 1)
    with pytest.raises(ValueError, match="must fit"):
        RequestBudget(SHARE - 1, SHARE, MESSAGE)
    with pytest.raises(ValueError, match="must fit"):
        RequestBudget(TOTAL, SHARE, 0)


def test_a_caller_waits_at_its_share_and_is_admitted_when_a_message_arrives() -> None:
    async def check() -> None:
        budget = _budget()
        first, second = await budget.admit("a"), await budget.admit("a")
        third = await _pending(budget.admit("a"))
        assert not third.done()
        first.arrived(30)  # its message was 30 bytes: once its request ended, 70 come back,
        first.settle()  # not enough yet
        await _settled()
        assert not third.done()
        assert budget.held == 30 + MESSAGE
        second.arrived(0)
        second.settle()
        await _settled()
        assert third.done()
        assert budget.held == 30 + 0 + MESSAGE
        first.release()
        second.release()
        third.result().release()
        assert budget.held == 0

    asyncio.run(check())


def test_a_caller_at_its_share_holds_up_no_other_caller() -> None:
    async def check() -> None:
        budget = _budget()
        held = [await budget.admit("flood"), await budget.admit("flood")]
        waiting = [await _pending(budget.admit("flood")) for _ in range(3)]
        other = await asyncio.wait_for(budget.admit("other"), 1)
        assert not any(task.done() for task in waiting)
        # The total is now spent: the next call of a third caller waits too.
        third = await _pending(budget.admit("third"))
        assert not third.done()
        other.release()
        await _settled()
        assert third.done()
        assert not any(task.done() for task in waiting)
        for admission in held:
            admission.release()
        await _settled()
        assert sum(task.done() for task in waiting) == 2  # the flood's share again
        for task in waiting:
            if task.done():
                task.result().release()
            else:
                task.cancel()
        await _settled()
        third.result().release()
        assert budget.held == 0

    asyncio.run(check())


def test_callers_that_wait_are_admitted_in_turn() -> None:
    async def check() -> None:
        budget = RequestBudget(MESSAGE, MESSAGE, MESSAGE)  # one call at a time
        admitted: list[str] = []

        async def call(caller: str) -> None:
            admission = await budget.admit(caller)
            admitted.append(caller)
            await asyncio.sleep(0)
            admission.release()

        first = await budget.admit("a")
        calls = [asyncio.ensure_future(call(caller)) for caller in "aaabbc"]
        await _settled()
        first.release()
        await asyncio.gather(*calls)
        assert admitted == ["a", "b", "c", "a", "b", "a"]

    asyncio.run(check())


def test_a_call_cancelled_while_it_waits_leaves_nothing_behind() -> None:
    async def check() -> None:
        budget = RequestBudget(MESSAGE, MESSAGE, MESSAGE)
        held = await budget.admit("a")
        waiting = await _pending(budget.admit("a"))
        waiting.cancel()
        await _settled()
        held.release()
        assert budget.held == 0
        assert (await asyncio.wait_for(budget.admit("a"), 1)).held == MESSAGE

    asyncio.run(check())


def test_a_call_admitted_as_it_is_cancelled_gives_its_reservation_back() -> None:
    async def check() -> None:
        budget = RequestBudget(MESSAGE, MESSAGE, MESSAGE)
        held = await budget.admit("a")
        waiting = await _pending(budget.admit("a"))
        held.release()  # admits the waiting call: its task has not run since
        waiting.cancel()
        await _settled()
        assert waiting.cancelled()
        assert budget.held == 0

    asyncio.run(check())


def test_settling_and_releasing_twice_changes_nothing() -> None:
    async def check() -> None:
        budget = _budget()
        admission: Admission = await budget.admit("a")
        admission.arrived(40)
        admission.settle()
        admission.arrived(90)  # a second message is refused; the first one's size stands
        admission.settle()
        assert budget.held == admission.held == 40
        admission.release()
        admission.release()
        assert budget.held == 0

    asyncio.run(check())


def test_a_caller_with_a_token_has_a_bounded_number_of_calls_waiting() -> None:
    """Each waiting call holds a stream of the front door's pools: one token's streams that
    sent their headers and never a message filled a pool, and every other caller got 503."""
    async def check() -> None:
        budget = RequestBudget(TOTAL, SHARE, MESSAGE, max_waiting_per_caller=2)
        held = [await budget.admit("a"), await budget.admit("a")]  # a's share
        waiting = [await _pending(budget.admit("a")) for _ in range(2)]
        with pytest.raises(ResourceExhaustedError, match="2 of this token's calls already"):
            await budget.admit("a")
        other = await budget.admit("b")  # another caller is not refused
        # With authentication off every call is the same caller: it waits, unbounded.
        anonymous = [await _pending(budget.admit("", bounded=False)) for _ in range(3)]
        assert not any(task.done() for task in [*waiting, *anonymous])
        held[0].release()  # a's first waiting call is admitted: one more may wait
        await _settled()
        assert waiting[0].done()
        again = await _pending(budget.admit("a"))
        assert not again.done()
        for task in [*waiting[1:], *anonymous, again]:
            task.cancel()
        await _settled()
        for admission in [held[1], other, waiting[0].result()]:
            admission.release()
        assert budget.held == 0

    asyncio.run(check())


@pytest.mark.parametrize("line", [FRONT_DOOR_PROBE, FRONT_DOOR_CHECKS])
def test_a_line_of_health_checks_is_refused_in_its_own_words(line: Caller) -> None:
    """The front door's health checks carry no token: a refusal that spoke of "this token's
    calls" sent their operator looking for a token that is not there."""
    async def check() -> None:
        budget = RequestBudget(TOTAL, SHARE, MESSAGE, max_waiting_per_caller=1)
        held = [await budget.admit(line.name), await budget.admit(line.name)]
        waiting = await _pending(budget.admit(line.name))
        with pytest.raises(ResourceExhaustedError) as refused:
            await budget.admit(line.name)
        assert str(refused.value).startswith(f"1 of the {line.name} already wait")
        waiting.cancel()
        await _settled()
        for admission in held:
            admission.release()
        assert budget.held == 0

    asyncio.run(check())


def test_the_calls_without_a_token_are_bounded_as_a_token_s_are() -> None:
    """With authentication on, health checks that sent their headers and never a message
    waited in the tokenless line without bound, until they filled every call the server may
    run: a token holder's calls, and the front door's probes, were refused."""
    async def check() -> None:
        budget = RequestBudget(TOTAL, SHARE, MESSAGE, max_waiting_per_caller=2)
        held = [await budget.admit(""), await budget.admit("")]  # the tokenless share
        waiting = [await _pending(budget.admit("")) for _ in range(2)]
        with pytest.raises(ResourceExhaustedError,
                           match="2 of the calls without a token already wait"):
            await budget.admit("")
        for task in waiting:
            task.cancel()
        await _settled()
        for admission in held:
            admission.release()
        assert budget.held == 0

    asyncio.run(check())

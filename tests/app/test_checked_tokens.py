"""The front door's token check hands the caller it found to the one call it admitted, so that
call reads its token once (api/checked_tokens.py, ADR 0119); a revocation still refuses every
call checked after it."""

from __future__ import annotations

import asyncio

from shellexec.api.checked_tokens import HANDOFF_SECONDS, MAX_WAITING, CheckedTokens
from shellexec.service import Caller

ALICE = Caller("alice", frozenset({"read"}))


class Store:
    """The token store as the lookup sees it: which secrets are valid, and how often it was
    asked."""

    def __init__(self) -> None:
        self.valid: dict[str, Caller] = {"shx_alice": ALICE}
        self.reads = 0

    async def lookup(self, secret: str) -> Caller | None:
        self.reads += 1
        return self.valid.get(secret)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _tokens() -> tuple[CheckedTokens, Store, Clock]:
    store, clock = Store(), Clock()
    return CheckedTokens(store.lookup, clock), store, clock


def test_the_call_a_check_admitted_reads_nothing_and_the_next_one_reads_again() -> None:
    tokens, store, _ = _tokens()

    async def run() -> list[Caller | None]:
        return [await tokens.check("shx_alice"), await tokens.authenticate("shx_alice"),
                await tokens.authenticate("shx_alice")]

    assert asyncio.run(run()) == [ALICE, ALICE, ALICE]
    assert store.reads == 2  # the check's, and the second call's (the first was handed one)


def test_a_revocation_refuses_every_call_checked_after_it() -> None:
    tokens, store, _ = _tokens()

    async def run() -> list[Caller | None]:
        admitted = await tokens.check("shx_alice")  # a request checked before revoking
        del store.valid["shx_alice"]  # `shellexec token revoke`
        return [admitted, await tokens.authenticate("shx_alice"),  # that request's call
                await tokens.check("shx_alice"), await tokens.authenticate("shx_alice")]

    assert asyncio.run(run()) == [ALICE, ALICE, None, None]


def test_a_handed_caller_waits_only_so_long() -> None:
    tokens, store, clock = _tokens()

    async def run() -> Caller | None:
        await tokens.check("shx_alice")
        del store.valid["shx_alice"]
        clock.now += HANDOFF_SECONDS + 0.001
        return await tokens.authenticate("shx_alice")

    assert asyncio.run(run()) is None


def test_a_refused_check_leaves_nothing_and_checks_are_handed_one_each() -> None:
    tokens, store, _ = _tokens()

    async def run() -> list[Caller | None]:
        await tokens.check("shx_unknown")
        await tokens.check("shx_alice")
        await tokens.check("shx_alice")
        return [await tokens.authenticate("shx_unknown"), await tokens.authenticate("shx_alice"),
                await tokens.authenticate("shx_alice")]

    assert asyncio.run(run()) == [None, ALICE, ALICE]
    assert store.reads == 4  # three checks and the unknown secret's call


def test_checks_whose_calls_never_come_are_bounded() -> None:
    tokens, store, _ = _tokens()

    async def run() -> int:
        for _ in range(MAX_WAITING + 1):  # the last one finds the table full: it starts over
            await tokens.check("shx_alice")
        reads = store.reads
        await tokens.authenticate("shx_alice")  # the one left after starting over
        await tokens.authenticate("shx_alice")  # none left: read
        return store.reads - reads

    assert asyncio.run(run()) == 1

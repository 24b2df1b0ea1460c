"""The front door's token check hands the caller it found to the one call it admitted, by a
ticket Envoy adds to that request, so that call reads its token once (api/checked_tokens.py,
ADR 0119); a revocation still refuses every call checked after it, and every call that does
not carry its check's ticket."""

from __future__ import annotations

import asyncio

from shellexec.api.checked_tokens import HANDOFF_SECONDS, MAX_WAITING, Checked, CheckedTokens
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


def _ticket(checked: Checked | None) -> str:
    assert checked is not None
    return checked.ticket


def test_the_call_a_check_admitted_reads_nothing_and_the_next_one_reads_again() -> None:
    tokens, store, _ = _tokens()

    async def run() -> list[Caller | None]:
        ticket = _ticket(await tokens.check("shx_alice"))
        return [await tokens.authenticate("shx_alice", ticket),
                await tokens.authenticate("shx_alice", ticket)]

    assert asyncio.run(run()) == [ALICE, ALICE]
    assert store.reads == 2  # the check's, and the second call's (the first was handed one)


def test_a_revocation_refuses_every_call_checked_after_it() -> None:
    tokens, store, _ = _tokens()

    async def run() -> list[Caller | Checked | None]:
        admitted = _ticket(await tokens.check("shx_alice"))  # checked before revoking
        del store.valid["shx_alice"]  # `shellexec token revoke`
        return [await tokens.authenticate("shx_alice", admitted),  # that request's call
                await tokens.check("shx_alice"), await tokens.authenticate("shx_alice", None)]

    assert asyncio.run(run()) == [ALICE, None, None]


def test_a_call_without_its_check_s_ticket_takes_nothing_after_a_revocation() -> None:
    """Answers were keyed by the token: checks of requests that never reached a server
    (Envoy answered them itself) left answers that a direct gRPC call with the revoked token
    took, for two seconds."""
    tokens, store, _ = _tokens()

    async def run() -> list[Caller | None]:
        tickets = [_ticket(await tokens.check("shx_alice")) for _ in range(200)]
        del store.valid["shx_alice"]
        return [await tokens.authenticate("shx_alice", None),  # straight to the server
                await tokens.authenticate("shx_alice", "f" * 32),  # a made-up ticket
                await tokens.authenticate("shx_other", tickets[0])]  # another token's

    assert asyncio.run(run()) == [None, None, None]


def test_a_handed_caller_waits_only_so_long() -> None:
    tokens, store, clock = _tokens()

    async def run() -> Caller | None:
        ticket = _ticket(await tokens.check("shx_alice"))
        del store.valid["shx_alice"]
        clock.now += HANDOFF_SECONDS + 0.001
        return await tokens.authenticate("shx_alice", ticket)

    assert asyncio.run(run()) is None


def test_a_refused_check_has_no_ticket_and_each_check_has_its_own() -> None:
    tokens, store, _ = _tokens()

    async def run() -> list[Caller | None]:
        assert await tokens.check("shx_unknown") is None
        first, second = _ticket(await tokens.check("shx_alice")), _ticket(
            await tokens.check("shx_alice"))
        assert first != second
        return [await tokens.authenticate("shx_alice", second),
                await tokens.authenticate("shx_alice", first)]

    assert asyncio.run(run()) == [ALICE, ALICE]
    assert store.reads == 3  # the three checks


def test_checks_whose_calls_never_come_are_bounded() -> None:
    tokens, store, _ = _tokens()

    async def run() -> int:
        tickets = [_ticket(await tokens.check("shx_alice")) for _ in range(MAX_WAITING + 1)]
        reads = store.reads  # the last check found the table full: it started over
        await tokens.authenticate("shx_alice", tickets[-1])  # the one left
        await tokens.authenticate("shx_alice", tickets[0])  # forgotten: read
        return store.reads - reads

    assert asyncio.run(run()) == 1

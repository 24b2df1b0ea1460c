"""Handing the caller the front door's token check found to the call it let through, so that a
call through Envoy reads its token once, not twice (ADR 0119).

With authentication on, Envoy asks the server's token check about a request, then passes the
request on, and the interceptor looks its token up again. The check leaves the caller it found
here under a ticket, a random name it answers Envoy with; Envoy adds the ticket to that one
request (TICKET_HEADER), and the interceptor takes the caller by it instead of reading the
database. Each ticket is taken once, only within HANDOFF_SECONDS, and only with the token it
was made for, so a revocation still refuses every call checked after it: what is handed over
is the answer to a check that came before the revocation, for the one request that check
admitted. A call that comes another way (gRPC straight to the server) has no ticket that
names anything here, and is looked up as before.

Both sides run on the event loop's thread, so the table needs no lock.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import NamedTuple

from shellexec.api.auth import TokenLookup
from shellexec.service import Caller
from shellexec.service.tokens import token_hash

# How long a checked caller waits for its call; Envoy passes a request on at once.
HANDOFF_SECONDS = 2.0
# Callers waiting at most; past it the table starts over (checks whose requests never came).
MAX_WAITING = 4096


class Checked(NamedTuple):
    """A check's answer: the caller its token names, and the ticket its call takes it by."""

    caller: Caller
    ticket: str


class _Handed(NamedTuple):
    deadline: float
    digest: str
    caller: Caller


class CheckedTokens:
    """Token lookups for the check and the interceptor, sharing each check's answer once."""

    def __init__(self, lookup: TokenLookup, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self._lookup = lookup
        self._clock = clock
        self._waiting: dict[str, _Handed] = {}  # ticket -> the check's answer

    async def check(self, secret: str) -> Checked | None:
        """The caller `secret` names (the database's answer), left for the call it admits."""
        caller = await self._lookup(secret)
        if caller is None:
            return None
        if len(self._waiting) >= MAX_WAITING:
            self._waiting.clear()
        ticket = secrets.token_hex(16)
        self._waiting[ticket] = _Handed(self._clock() + HANDOFF_SECONDS, token_hash(secret),
                                        caller)
        return Checked(caller, ticket)

    async def authenticate(self, secret: str, ticket: str | None = None) -> Caller | None:
        """The caller the check that made `ticket` found for `secret`, or else the
        database's answer."""
        handed = self._waiting.pop(ticket, None) if ticket else None
        if (handed is not None and handed.deadline >= self._clock()
                and secrets.compare_digest(handed.digest, token_hash(secret))):
            return handed.caller
        return await self._lookup(secret)

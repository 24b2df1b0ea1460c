"""Handing the caller the front door's token check found to the call it let through, so that a
call through Envoy reads its token once, not twice (ADR 0119).

With authentication on, Envoy asks the server's token check about a request, then passes the
request on, and the interceptor looks its token up again. The check leaves the caller it found
here; the interceptor takes it instead of reading the database. Each caller is taken once and
only within HANDOFF_SECONDS, so a revocation still refuses every call checked after it: what
is handed over is the answer to a check that came before the revocation, for the one request
that check admitted. A call that comes another way (gRPC straight to the server) or finds
nothing here is looked up as before.

Both sides run on the event loop's thread, so the table needs no lock.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from shellexec.api.auth import TokenLookup
from shellexec.service import Caller
from shellexec.service.tokens import token_hash

# How long a checked caller waits for its call; Envoy passes a request on at once.
HANDOFF_SECONDS = 2.0
# Callers waiting at most; past it the table starts over (checks whose requests never came).
MAX_WAITING = 4096


class CheckedTokens:
    """Token lookups for the check and the interceptor, sharing each check's answer once."""

    def __init__(self, lookup: TokenLookup, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self._lookup = lookup
        self._clock = clock
        # Token digest -> (deadline, caller) of each check not yet taken by its call, oldest
        # first.
        self._waiting: dict[str, deque[tuple[float, Caller]]] = {}
        self._count = 0

    async def check(self, secret: str) -> Caller | None:
        """The caller `secret` names (the database's answer), left for the call it admits."""
        caller = await self._lookup(secret)
        if caller is not None:
            self._leave(token_hash(secret), caller)
        return caller

    async def authenticate(self, secret: str) -> Caller | None:
        """The caller a check just found for `secret`, or else the database's answer."""
        handed = self._take(token_hash(secret))
        return handed if handed is not None else await self._lookup(secret)

    def _leave(self, digest: str, caller: Caller) -> None:
        if self._count >= MAX_WAITING:
            self._waiting.clear()
            self._count = 0
        self._waiting.setdefault(digest, deque()).append(
            (self._clock() + HANDOFF_SECONDS, caller))
        self._count += 1

    def _take(self, digest: str) -> Caller | None:
        waiting = self._waiting.get(digest)
        now = self._clock()
        while waiting:
            deadline, caller = waiting.popleft()
            self._count -= 1
            if deadline >= now:
                if not waiting:
                    del self._waiting[digest]
                return caller
        self._waiting.pop(digest, None)
        return None

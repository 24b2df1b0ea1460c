"""Running a use case's unit of work as one group-committed write (see `store.database`).

The writer commits units in groups and, when one raises, rolls the group back and runs each
unit again alone (see `store.database`). A `ServiceError` (unknown session, bad field, turn
already running) is always raised before the unit writes anything, so it travels back as a
value instead: the group commits as usual and the error is raised again in the caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from shellexec.service.errors import ServiceError
from shellexec.store import Database

T = TypeVar("T")


async def write(database: Database, work: Callable[[], T], session: str | None = None, *,
                committed: Callable[[T | None], None] | None = None) -> T:
    """Runs `work` as one durable unit of work and returns its result; `session` names the
    session it changes, if it changes one (its row is locked first where other replicas
    write too). `committed`, when given, is called once the unit's outcome is known, with its
    result if it was committed and None otherwise, before this returns, and even if the
    caller was cancelled meanwhile (see `Database.write`): announcements go there."""

    def unit() -> tuple[T | None, ServiceError | None]:
        try:
            return work(), None
        except ServiceError as error:
            return None, error

    def settled(done: asyncio.Future[tuple[T | None, ServiceError | None]]) -> None:
        assert committed is not None
        stored = None if done.cancelled() or done.exception() is not None else done.result()
        committed(None if stored is None or stored[1] is not None else stored[0])

    value, error = await database.write(unit, session,
                                        None if committed is None else settled)
    if error is not None:
        raise error
    return value  # type: ignore[return-value]  # no error: work() returned a T

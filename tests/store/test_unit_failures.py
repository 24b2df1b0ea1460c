"""A unit of work's failure reaches its caller whatever it is, and the units beside it in its
group are served: a unit that raised StopIteration (which a future refuses) left its caller,
and every later write, waiting for ever."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shellexec.store.opening import open_database


def test_a_unit_raising_stop_iteration_fails_its_caller_and_no_other(tmp_path: Path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'db.sqlite'}", readers=1)

    def broken() -> None:
        next(iter(()))  # StopIteration, as the known sessions' eviction raised at capacity 0

    async def writes() -> tuple[BaseException | None, list[int]]:
        async with asyncio.timeout(30):  # a write that never settles fails here, not hangs
            results = await asyncio.gather(database.write(broken), database.write(lambda: 1),
                                           database.write(lambda: 2), return_exceptions=True)
            after = await database.write(lambda: 3)
        failure = results[0] if isinstance(results[0], BaseException) else None
        return failure, [*(value for value in results[1:] if isinstance(value, int)), after]

    try:
        failure, served = asyncio.run(writes())
    finally:
        database.close()
    assert isinstance(failure, RuntimeError)
    assert isinstance(failure.__cause__, StopIteration)
    assert served == [1, 2, 3]

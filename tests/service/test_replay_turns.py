"""Replays read the durable log one batch at a time, whoever asks: a token's watchers replaying
a long log over and over held every reader thread (and the interpreter's lock with them), and
every other caller's reads and feeds were five to twenty-five times slower (a probe: 16 replays
of a 16 MB log from one token)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.rules.limits import REPLAY_BATCH_EVENTS
from shellexec.service import Caller, system_clock
from shellexec.service.reading import REPLAY_READS_AT_ONCE
from shellexec.service.tokens import Tokens
from shellexec.vocabulary import SCOPE_READ

from support.acp import codex_start

WATCHERS = 8
BATCHES = 3


def test_replays_of_many_watchers_read_one_batch_at_a_time(tmp_path: Path) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'replay.db'}"))
    Tokens(app.database, system_clock).create("replayer", [SCOPE_READ], [])
    caller = Caller("replayer", frozenset({SCOPE_READ}))
    reading, most = [0], [0]
    read = app.database.read

    async def counted(work: Callable[[], Any]) -> Any:
        replay = isinstance(work, functools.partial) and work.func.__name__ == "events_or_reset"
        reading[0] += replay
        most[0] = max(most[0], reading[0])
        try:
            return await read(work)
        finally:
            reading[0] -= replay

    app.database.read = counted  # type: ignore[method-assign]

    async def replay_all(session_id: str, last: int) -> None:
        async def replay() -> None:
            async for event in await app.reader.watch(session_id, 0, caller=caller):
                if event.revision >= last:
                    return

        await asyncio.gather(*(replay() for _ in range(WATCHERS)))

    async def check() -> None:
        session = await app.sessions.create("replay-task", "codex")
        for index in range(BATCHES * REPLAY_BATCH_EVENTS):
            await app.publisher.publish(session.id, codex_start(f"c{index}", f"echo {index}"),
                                        None)
        await replay_all(session.id, (await app.sessions.get(session.id)).revision)

    try:
        asyncio.run(check())
    finally:
        app.database.close()
    assert most[0] == REPLAY_READS_AT_ONCE == 1



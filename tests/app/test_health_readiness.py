"""The health service's readiness as probes that are not gRPC read it (the front door's token
check's, ADR 0119): checked at each probe, and never ready while the server stops, as its
gRPC readiness names then answer NOT_SERVING."""

from __future__ import annotations

import asyncio

from shellexec.app.health import Health


def test_readiness_follows_the_check_and_ends_with_stopping() -> None:
    problems: list[str | None] = [None, "the database is gone", None]

    async def run() -> list[bool]:
        health = Health(lambda: problems.pop(0) if problems else None, interval=3600)
        await health.start()  # the first check
        answers = [await health.ready(), await health.ready()]
        await health.stop()
        return [*answers, await health.ready()]

    assert asyncio.run(run()) == [False, True, False]

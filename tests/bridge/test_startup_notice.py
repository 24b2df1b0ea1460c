"""An agent that does not answer its start (`initialize`, `session/new`) keeps the bridge
waiting, as a slow first `npx` download rightly does; the bridge says once what it waits for,
and that Ctrl-C stops it. A probe's agent that never answered left the bridge silent."""

from __future__ import annotations

import asyncio
import logging
from typing import cast

import pytest

from shellexec.bridge.agent import AgentHandle, agent_step

# No agent fails here: the handle is read only when one does.
NO_HANDLE = cast(AgentHandle, object())


def test_a_start_without_an_answer_is_told_once(caplog: pytest.LogCaptureFixture) -> None:
    async def run() -> bool:
        never: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        step = asyncio.ensure_future(agent_step(NO_HANDLE, "initialize", never, 0.01))
        for _ in range(3000):  # the notice, once its time has passed (30 s at most)
            if caplog.records:
                break
            await asyncio.sleep(0.01)
        assert not step.done()
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step
        return never.cancelled()

    with caplog.at_level(logging.WARNING, logger="shellexec.bridge"):
        assert asyncio.run(run())  # the request itself is given up with the step
    assert [record.getMessage() for record in caplog.records] == [
        "the agent has not answered initialize after 0 s; still waiting (Ctrl-C stops)"]


def test_an_answer_in_time_is_not_told(caplog: pytest.LogCaptureFixture) -> None:
    async def answered() -> str:
        return "started"

    with caplog.at_level(logging.WARNING, logger="shellexec.bridge"):
        assert asyncio.run(agent_step(NO_HANDLE, "initialize", answered(), 60)) == "started"
    assert not caplog.records

"""The agent's stdout as the bridge's frame reader reads it (`agent.OutputUntilExit`): every
read until the agent exits waits on its own read and on one wait for the exit, made once; a
read cancelled while it waits has taken no data; once the agent exited what it wrote is read,
then the output ends; and the wait for the exit ends with the output, leaving no task behind.
Each read made and cancelled a wait of its own before, a task per read of the agent's stdout."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Literal, cast

import pytest

from shellexec.bridge import agent
from shellexec.bridge.agent import OutputUntilExit

# The agent process: only its exit status is read, once the output is given up on.
NO_PROCESS = cast(asyncio.subprocess.Process, SimpleNamespace(returncode=0))


class CountedExit(asyncio.Event):
    """The agent's exit event, counting the waits made on it."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    async def wait(self) -> Literal[True]:
        self.waits += 1
        return await super().wait()


@pytest.fixture(autouse=True)
def _quick_drain(monkeypatch: pytest.MonkeyPatch) -> None:
    """A drain that gives up soon: no test here waits for output that never comes longer."""
    monkeypatch.setattr(agent, "EXITED_QUIET_SECONDS", 0.01)


def _others() -> set[asyncio.Task[object]]:
    """The tasks of the loop but the current one."""
    return asyncio.all_tasks() - {cast(asyncio.Task[object], asyncio.current_task())}


def test_the_reads_until_the_exit_share_one_wait_for_it() -> None:
    """What the agent wrote is read as it comes, and what it wrote before it exited once it
    exited; then the output ends, though the pipe stays open (a process the agent started
    holds it)."""
    async def scenario() -> tuple[list[bytes], int]:
        reader, exited = asyncio.StreamReader(), CountedExit()
        output = OutputUntilExit(reader, exited, NO_PROCESS)
        chunks = []
        for index in range(50):
            reader.feed_data(b"%d\n" % index)
            chunks.append(await output.read(1024))
        reader.feed_data(b"last words")
        exited.set()
        chunks += [await output.read(1024), await output.read(1024), await output.read(1024)]
        return chunks, exited.waits

    chunks, waits = asyncio.run(scenario())
    assert chunks == [*(b"%d\n" % index for index in range(50)), b"last words", b"", b""]
    assert waits == 1


def test_a_read_cancelled_while_it_waits_takes_no_data() -> None:
    async def scenario() -> tuple[bytes, bytes, int]:
        reader, exited = asyncio.StreamReader(), CountedExit()
        output = OutputUntilExit(reader, exited, NO_PROCESS)
        waiting = asyncio.ensure_future(output.read(1024))
        while exited.waits == 0:  # the read waits for data and for the exit
            await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        reader.feed_data(b"kept")
        kept = await output.read(1024)
        exited.set()  # the one wait still tells the next read of the exit
        return kept, await output.read(1024), exited.waits

    assert asyncio.run(scenario()) == (b"kept", b"", 1)


@pytest.mark.parametrize("end", ["eof", "close"])
def test_the_wait_for_the_exit_ends_with_the_output(end: str) -> None:
    """The output ends while the agent still runs: at the pipe's end (the agent closed its
    stdout), or closed by the bridge (the connection closed). No task is left waiting for an
    exit that nothing reads for, which the loop would report destroyed while pending."""
    async def scenario() -> tuple[set[asyncio.Task[object]], set[asyncio.Task[object]],
                                  bytes]:
        reader, exited = asyncio.StreamReader(), asyncio.Event()
        output = OutputUntilExit(reader, exited, NO_PROCESS)
        reader.feed_data(b"hello")
        assert await output.read(1024) == b"hello"
        reading = _others()  # the wait for the exit
        if end == "eof":
            reader.feed_eof()
            assert await output.read(1024) == b""
        else:
            await output.close()
        return reading, _others(), await output.read(1024)

    reading, left, after = asyncio.run(scenario())
    assert len(reading) == 1
    assert left == set()
    assert after == b""

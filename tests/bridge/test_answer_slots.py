"""How `AgentStream.send` and `AnswerSlots` keep what waits for an agent that does not read to
one frame: frames go one at a time, in order and whole; a large answer's turn (its slot) is
given back once its frame drained, or once its task ends however it ends."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

from shellexec.bridge.agent_stream import WRITE_BYTES, AgentStream, AnswerSlots


class _Pipe:
    """A StreamWriter whose drain() waits until `flow` is set, as an agent not reading."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.flow = asyncio.Event()

    def write(self, data: bytes) -> None:
        self.written += data

    async def drain(self) -> None:
        await self.flow.wait()


def _stream(pipe: _Pipe) -> AgentStream:
    return AgentStream(cast(asyncio.StreamReader, None), cast(asyncio.StreamWriter, pipe))


def _message(index: int, size: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": index, "result": {"output": "\x01" * size}}


def _frames(written: bytes | bytearray) -> list[Any]:
    return [json.loads(line) for line in written.splitlines()]


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_frames_go_one_at_a_time_and_whole_in_order() -> None:
    async def main() -> None:
        pipe = _Pipe()
        stream = _stream(pipe)
        sends = [asyncio.create_task(stream.send(_message(index, WRITE_BYTES)))
                 for index in range(5)]
        await _settle()
        # Only the first part of the first frame went out; the others wait unencoded.
        assert len(pipe.written) == WRITE_BYTES
        pipe.flow.set()
        await asyncio.gather(*sends)
        assert _frames(pipe.written) == [_message(index, WRITE_BYTES) for index in range(5)]

    asyncio.run(main())


def test_a_send_cancelled_mid_frame_still_writes_the_frame_whole() -> None:
    async def main() -> None:
        pipe = _Pipe()
        stream = _stream(pipe)
        first = asyncio.create_task(stream.send(_message(1, WRITE_BYTES)))
        await _settle()
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert first.cancelled()
        pipe.flow.set()
        await stream.send(_message(2, 10))
        assert _frames(pipe.written) == [_message(1, WRITE_BYTES), _message(2, 10)]

    asyncio.run(main())


def test_a_slot_is_given_back_once_its_answer_drained() -> None:
    async def main() -> None:
        pipe = _Pipe()
        stream = _stream(pipe)
        slots = AnswerSlots()
        built: list[int] = []

        async def answer(index: int) -> None:
            await slots.hold()
            built.append(index)
            await stream.send(_message(index, 10))

        tasks = [asyncio.create_task(answer(index)) for index in range(3)]
        await _settle()
        assert built == [0]  # the others wait for their turn before building anything
        pipe.flow.set()
        await asyncio.gather(*tasks)
        assert built == [0, 1, 2]
        assert [frame["id"] for frame in _frames(pipe.written)] == [0, 1, 2]

    asyncio.run(main())


def test_a_slot_whose_task_ends_without_sending_is_given_back() -> None:
    async def main() -> None:
        slots = AnswerSlots()
        stuck = asyncio.Event()

        async def cancelled_after_holding() -> None:
            await slots.hold()
            await stuck.wait()

        async def failing_after_holding() -> None:
            await slots.hold()
            raise RuntimeError("no answer")

        holder = asyncio.create_task(cancelled_after_holding())
        await _settle()
        holder.cancel()
        await asyncio.gather(holder, return_exceptions=True)
        await asyncio.gather(asyncio.create_task(failing_after_holding()),
                             return_exceptions=True)
        async with asyncio.timeout(5):
            await slots.hold()  # would wait for ever had either kept its slot

    asyncio.run(main())


def test_a_task_started_by_a_slot_holder_does_not_give_its_slot_back() -> None:
    async def main() -> None:
        pipe = _Pipe()
        pipe.flow.set()
        stream = _stream(pipe)
        slots = AnswerSlots()
        await slots.hold()
        # The child copies the context, slot included, but sending is not its to give back.
        await asyncio.create_task(stream.send(_message(1, 10)))
        other = asyncio.create_task(slots.hold())
        await _settle()
        assert not other.done()
        await stream.send(_message(2, 10))  # this task's own answer: the slot goes back
        async with asyncio.timeout(5):
            await other

    asyncio.run(main())

"""The agent's stdio as the ACP connection's message transport, read by the bridge itself.

The SDK's own stdio reader rejoins a line of any length and passes on whatever JSON it parsed;
this one hands the connection only the frames `frames.read_message` accepts, and drops each
other one with a warning naming its size (ADR 0122). It reads the pipe in chunks, so a frame
over the cap costs at most the cap in memory, however long it goes on. A notification the
bridge does not serve is dropped too, before the SDK would log a traceback for it
(`notifications.py`). A flood of either kind costs a few tallies, not a line each
(`flood_log.py`, ADR 0129). A `terminal/create` whose params the SDK would read otherwise
than sent is marked for its handler to refuse (`terminal_params.py`).

What the bridge sends goes one frame at a time, written a part at a time once the part before
drained, and a frame is encoded only once the one before went out: however many answers wait
for an agent that does not read, one frame is held encoded. The ACP SDK runs each request of
the agent in its own task, handler and then `send`; an answer that can be large
(`terminal/output`, `fs/read_text_file`) is built only once its handler holds an `AnswerSlots`
slot, which `send` gives back when that answer has drained. So an agent that asks again and
again without reading what it asked for makes the bridge hold one large answer, not one per
request (ADR 0122).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from contextvars import ContextVar
from typing import Any

from shellexec.bridge.flood_log import FloodLog
from shellexec.bridge.frames import (
    MAX_FRAME_BYTES,
    MAX_FRAME_DEPTH,
    FrameSplitter,
    Oversized,
    Refused,
    read_message,
)
from shellexec.bridge.notifications import UNSERVED_TALLY, unserved_method, unserved_warning
from shellexec.bridge.terminal_params import mark_invalid

# The tally of a flood of dropped frames.
_DROPPED_TALLY = "agent sent {count} frames the bridge dropped so far (the latest: {latest})"

# What one read takes from the pipe; the stream reader given to the transport should buffer
# about as much (its `limit`), so that neither holds much beyond the frame under way.
READ_BYTES = 64 * 1024

# How much of a frame one write() hands the pipe's transport before waiting for it to drain.
WRITE_BYTES = 1024 * 1024

# How many large answers may be built or sent at once.
ANSWER_SLOTS = 1


class _Slot:
    """One held slot of an `AnswerSlots`; released once, by `send` or when its task ends."""

    def __init__(self, semaphore: asyncio.Semaphore, task: asyncio.Task[Any] | None) -> None:
        self._semaphore = semaphore
        self.task = task
        self.released = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self._semaphore.release()


# The slot the current request's task holds, set by its handler and seen by `send` in the
# same task (the SDK awaits the handler and then sends its answer, both in that task).
_held_slot: ContextVar[_Slot | None] = ContextVar("shellexec_answer_slot", default=None)


class AnswerSlots:
    """Turns for building and sending an answer that can be large.

    A handler awaits `hold()` before it builds such an answer; the slot is given back when
    `AgentStream.send` has drained that answer (or failed to), or at the latest when the
    request's task ends, so a handler that fails or is cancelled cannot keep it."""

    def __init__(self, count: int = ANSWER_SLOTS) -> None:
        self._semaphore = asyncio.Semaphore(count)

    async def hold(self) -> None:
        task = asyncio.current_task()
        held = _held_slot.get()
        if held is not None and held.task is task and not held.released:
            return  # a task holds one slot at most
        await self._semaphore.acquire()
        slot = _Slot(self._semaphore, task)
        _held_slot.set(slot)
        if task is not None:
            task.add_done_callback(lambda _: slot.release())


def release_answer_slot() -> None:
    """Gives back the slot the current task holds, if any (only in the task that took it: a
    task started meanwhile copied the context, slot included)."""
    slot = _held_slot.get()
    if slot is not None and slot.task is asyncio.current_task():
        _held_slot.set(None)
        slot.release()


class AgentStream:
    """An `acp` Transport over the agent's stdout (`reader`) and stdin (`writer`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 max_frame_bytes: int = MAX_FRAME_BYTES,
                 max_depth: int = MAX_FRAME_DEPTH) -> None:
        self._reader = reader
        self._writer = writer
        self._splitter = FrameSplitter(max_frame_bytes)
        self._max_depth = max_depth
        self._frames: deque[bytes | Oversized] = deque()
        self._dropped = FloodLog(_DROPPED_TALLY)
        self._unserved = FloodLog(UNSERVED_TALLY)
        self._ended = False
        self._closed = False
        self._sending = asyncio.Lock()

    async def receive(self) -> dict[str, Any] | None:
        """The next message the agent sent that the bridge takes; None at the end."""
        while True:
            while self._frames:
                message = self._accept(self._frames.popleft())
                if message is not None:
                    return message
            if self._ended:
                return None
            chunk = await self._reader.read(READ_BYTES)
            self._frames.extend(self._splitter.feed(chunk) if chunk else self._splitter.end())
            self._ended = not chunk

    async def send(self, message: dict[str, Any]) -> None:
        # One frame at a time (the lock is fair, so frames go in the order sent): drain()
        # waits while the agent is not reading, and the frames of other senders wait
        # unencoded meanwhile.
        try:
            async with self._sending:
                if self._closed:
                    raise ConnectionError("the connection to the agent is closed")
                await self._write_frame(json.dumps(message, separators=(",", ":")))
        finally:
            release_answer_slot()

    async def _write_frame(self, frame: str) -> None:
        """Writes `frame` (ASCII: `json.dumps` escapes every other character) and its newline
        a part at a time, each once the one before drained: the frame is held once, as text,
        not again as bytes, nor a third time by the transport, which copies what the pipe
        does not take at once."""
        sent = 0
        try:
            while sent < len(frame):
                part = frame[sent:sent + WRITE_BYTES]
                sent += len(part)
                self._writer.write(part.encode())
                if sent == len(frame):
                    self._writer.write(b"\n")
                await self._writer.drain()
        except asyncio.CancelledError:
            # Never half a frame, which the next one would be joined to; once the connection
            # is closed (its tasks are cancelled then) no frame follows.
            if sent < len(frame) and not self._closed:
                self._writer.write(frame[sent:].encode())
                self._writer.write(b"\n")
            raise

    async def close(self) -> None:
        """Refuses further sends; the agent's stdin is closed by whoever stops the agent."""
        self._closed = True

    def _accept(self, frame: bytes | Oversized) -> dict[str, Any] | None:
        if isinstance(frame, Oversized):
            self._drop(f"a frame of {frame.size} bytes, over the bridge's limit of "
                       f"{self._splitter.cap}")
            return None
        message = read_message(frame, self._max_depth)
        if isinstance(message, Refused):
            self._drop(f"a frame of {message.size} bytes that is no JSON-RPC message the "
                       f"bridge takes ({message.reason})")
            return None
        if message is not None and (method := unserved_method(message)) is not None:
            self._unserved.note(*unserved_warning(method))
            return None
        if message is not None:
            mark_invalid(message)  # before the SDK's lenient read hides what was sent
        return message

    def _drop(self, frame: str) -> None:
        self._dropped.note(f"agent sent {frame}: dropped", frame)

"""The agent's stdio as the ACP connection's message transport, read by the bridge itself.

The SDK's own stdio reader rejoins a line of any length and passes on whatever JSON it parsed;
this one hands the connection only the frames `frames.read_message` accepts, and drops each
other one with a warning naming its size (ADR 0122). It reads the pipe in chunks, so a frame
over the cap costs at most the cap in memory, however long it goes on. A notification the
bridge does not serve is dropped too, before the SDK would log a traceback for it
(`notifications.py`). A flood of either kind costs a few tallies, not a line each
(`flood_log.py`, ADR 0129).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
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

# The tally of a flood of dropped frames.
_DROPPED_TALLY = "agent sent {count} frames the bridge dropped so far (the latest: {latest})"

# What one read takes from the pipe; the stream reader given to the transport should buffer
# about as much (its `limit`), so that neither holds much beyond the frame under way.
READ_BYTES = 64 * 1024


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
        # One write() puts the whole frame in the buffer, so concurrent senders never
        # interleave; drain() waits while the agent is not reading.
        if self._closed:
            raise ConnectionError("the connection to the agent is closed")
        self._writer.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
        await self._writer.drain()

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
        return message

    def _drop(self, frame: str) -> None:
        self._dropped.note(f"agent sent {frame}: dropped", frame)

"""The agent's stdio as the ACP connection's message transport, read by the bridge itself.

The SDK's own stdio reader rejoins a line of any length and passes on whatever JSON it parsed;
this one hands the connection only the frames `frames.read_message` accepts, and drops each
other one with one warning line naming its size (ADR 0122). It reads the pipe in chunks, so a
frame over the cap costs at most the cap in memory, however long it goes on. A notification
the bridge does not serve is dropped too, before the SDK would log a traceback for it, with a
warning that a flood of them cannot multiply (`notifications.py`, ADR 0129).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from typing import Any

from shellexec.bridge.frames import (
    MAX_FRAME_BYTES,
    MAX_FRAME_DEPTH,
    FrameSplitter,
    Oversized,
    Refused,
    read_message,
)
from shellexec.bridge.notifications import UnservedLog, unserved_method

log = logging.getLogger("shellexec.bridge")

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
        self._unserved = UnservedLog()
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
            log.warning("agent sent a frame of %d bytes, over the bridge's limit of %d: "
                        "dropped", frame.size, self._splitter.cap)
            return None
        message = read_message(frame, self._max_depth)
        if isinstance(message, Refused):
            log.warning("agent sent a frame of %d bytes that is no JSON-RPC message the "
                        "bridge takes (%s): dropped", message.size, message.reason)
            return None
        if message is not None and (method := unserved_method(message)) is not None:
            self._unserved.note(method)
            return None
        return message

"""What the bridge accepts from the agent's stdout: newline-delimited JSON-RPC frames, each
bounded in size and nesting and shaped as one JSON-RPC message (ADR 0122).

The agent is an untrusted program. The ACP SDK would rejoin a frame of any length, hand a batch
(`[]`), `null` or an unhashable id to code that expects one message object, and deep-copy a
frame nested 750 levels deep until Python's recursion limit breaks the connection. This module
is the pure part of the bridge's own reader (`agent_stream.py`): `FrameSplitter` cuts the byte
stream into frames and forgets every byte of one over the cap, `read_message` keeps a frame
only if it is a JSON-RPC message the SDK can take. Anything else is dropped, with a reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from shellexec.bridge.nesting import nests_deeper_than

_MIB: Final = 1024 * 1024

# The longest frame the bridge reads: the service takes 4 MiB per update and 16 MiB per gRPC
# message, so a longer frame could not be recorded anyway.
MAX_FRAME_BYTES: Final = 16 * _MIB
# How deep a frame may nest objects and arrays, the frame itself being level 1. An update sits
# at level 3 and the service takes 32 levels of it (so 34 here); the SDK's copies of a message
# recurse about twice per level, and Python stops at 1000.
MAX_FRAME_DEPTH: Final = 64


@dataclass(frozen=True, slots=True)
class Oversized:
    """A frame longer than the cap, dropped as it streamed by: only its length is known."""

    size: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A frame that is no JSON-RPC message the bridge takes, and why."""

    size: int
    reason: str


@dataclass(slots=True)
class FrameSplitter:
    """Cuts a byte stream into frames at each newline; holds at most `cap` bytes of the frame
    under way, and only counts the bytes of one that went past the cap."""

    cap: int = MAX_FRAME_BYTES
    _parts: list[bytes] = field(default_factory=list)
    _held: int = 0
    _dropping: bool = False

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The frames `chunk` ends (without their newline), in order."""
        frames: list[bytes | Oversized] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._hold(chunk[start:end])
            frames.append(self._take())
            start = end + 1
        self._hold(chunk[start:])
        return frames

    def end(self) -> list[bytes | Oversized]:
        """At the end of the stream: the last frame, if it had no newline."""
        if not self._held and not self._dropping:
            return []
        return [self._take()]

    def _hold(self, piece: bytes) -> None:
        self._held += len(piece)
        if self._dropping or not piece:
            return
        if self._held > self.cap:
            self._dropping = True
            self._parts.clear()
        else:
            self._parts.append(piece)

    def _take(self) -> bytes | Oversized:
        frame: bytes | Oversized = (Oversized(self._held) if self._dropping
                                    else b"".join(self._parts))
        self._parts.clear()
        self._held = 0
        self._dropping = False
        return frame


def read_message(frame: bytes, max_depth: int = MAX_FRAME_DEPTH
                 ) -> dict[str, Any] | Refused | None:
    """The JSON-RPC message in `frame`; None for a blank line (skipped silently, as the SDK
    does); `Refused` for anything else."""
    if not frame.strip():
        return None
    try:
        message = json.loads(frame)
    except RecursionError:
        return Refused(len(frame), f"nested deeper than {max_depth} levels")
    except ValueError as error:  # also UnicodeDecodeError
        return Refused(len(frame), f"not JSON: {error}")
    problem = _shape_problem(message) or (
        f"nested deeper than {max_depth} levels" if nests_deeper_than(message, max_depth)
        else None)
    if problem is not None:
        return Refused(len(frame), problem)
    return message  # type: ignore[no-any-return]  # _shape_problem checked it is a dict


def _shape_problem(message: object) -> str | None:
    if isinstance(message, list):
        return "a JSON array: a batch, which ACP does not use"
    if not isinstance(message, dict):
        return f"not a JSON object but {_json_type(message)}"
    if "id" in message and not _is_id(message["id"]):
        return f"id must be a string, an integer or null, not {_json_type(message['id'])}"
    if "method" in message and not isinstance(message["method"], str):
        return f"method must be a string, not {_json_type(message['method'])}"
    if "method" not in message and "error" in message and not isinstance(message["error"],
                                                                          dict):
        return f"error must be an object, not {_json_type(message['error'])}"
    return None


def _is_id(value: object) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int)
                                                       and not isinstance(value, bool))


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)

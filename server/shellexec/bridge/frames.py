"""What the bridge accepts from the agent's stdout: newline-delimited JSON-RPC frames, each
bounded in size and nesting and shaped as one JSON-RPC message (ADR 0122).

The agent is an untrusted program. The ACP SDK would rejoin a frame of any length, hand a batch
(`[]`), `null` or an unhashable id to code that expects one message object, and deep-copy a
frame nested 750 levels deep until Python's recursion limit breaks the connection. This module
is the pure part of the bridge's own reader (`agent_stream.py`): `FrameSplitter` cuts the byte
stream into frames and forgets every byte of one over the cap, `read_message` keeps a frame
only if it is a JSON-RPC message the SDK can take. Anything else is dropped, with a reason.

Parsed, a frame of tiny values (`[0,0,...]`, two bytes each) takes far more memory than its
bytes: 16 MiB of them grew the bridge by about 1 GB and kept it busy for minutes. So a frame
whose values, counted from its bytes before it is parsed, pass MAX_FRAME_VALUES is dropped
too (ADR 0129).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Final

from shellexec.bridge.nesting import nests_deeper_than
from shellexec.rules.limits import MAX_REQUEST_VALUES

_MIB: Final = 1024 * 1024

# The longest frame the bridge reads: the service takes 4 MiB per update and 16 MiB per gRPC
# message, so a longer frame could not be recorded anyway.
MAX_FRAME_BYTES: Final = 16 * _MIB
# How deep a frame may nest objects and arrays, the frame itself being level 1. An update sits
# at level 3 and the service takes 32 levels of it (so 34 here); the SDK's copies of a message
# recurse about twice per level, and Python stops at 1000.
MAX_FRAME_DEPTH: Final = 64
# How many JSON values a frame may hold: twice what the service takes of one update
# (MAX_REQUEST_VALUES), so every update it could record passes with the frame around it, and
# a frame parsed costs the bridge about 20 MB at most however small its values are.
MAX_FRAME_VALUES: Final = 2 * MAX_REQUEST_VALUES

# A JSON string, escapes included, or the rest of the frame after a quote never closed: what
# the value count skips. Possessive, and always matching at a quote, so that a search never
# scans the same bytes twice (an unclosed string would otherwise be rescanned from each of its
# escaped quotes).
_STRING: Final = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)


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


def read_message(frame: bytes, max_depth: int = MAX_FRAME_DEPTH,
                 max_values: int = MAX_FRAME_VALUES) -> dict[str, Any] | Refused | None:
    """The JSON-RPC message in `frame`; None for a blank line (skipped silently, as the SDK
    does); `Refused` for anything else."""
    if not frame.strip():
        return None
    if holds_more_values_than(frame, max_values):
        return Refused(len(frame), f"it holds more than {max_values} JSON values")
    try:
        message = json.loads(frame, parse_constant=_not_json, parse_float=_finite)
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


def _not_json(constant: str) -> float:
    """`NaN`, `Infinity` and `-Infinity`, which Python's JSON reads and JSON does not have."""
    raise ValueError(f"{constant} is not a JSON value")


def _finite(text: str) -> float:
    """A JSON number as a double; one beyond a double (`1e400`) is refused, since neither the
    service nor any JSON reader would see the number the agent wrote."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text[:32]} is beyond a double")
    return number


def holds_more_values_than(frame: bytes, limit: int) -> bool:
    """Whether the JSON in `frame` may hold more than `limit` values, decided from its bytes.

    A value is the frame itself or an item of an array or object, and every item but a
    container's first follows a comma: so a JSON text holds at most one value more than its
    commas and opening brackets outside strings. Those in strings are counted too at first,
    which is quick; only a frame over the limit that way is walked string by string, taking
    each string's own separators off, until the count is within the limit or the strings
    alone prove it is not (each is a value or the key of one).
    """
    count = 1 + _separators(frame, 0, len(frame))
    if count <= limit:
        return False
    for seen, string in enumerate(_STRING.finditer(frame), 1):
        if seen > 2 * limit:
            return True
        count -= _separators(frame, string.start(), string.end())
        if count <= limit:
            return False
    return True


def _separators(text: bytes, start: int, end: int) -> int:
    return (text.count(b",", start, end) + text.count(b"[", start, end)
            + text.count(b"{", start, end))


def _shape_problem(message: object) -> str | None:
    if isinstance(message, list):
        return "a JSON array: a batch, which ACP does not use"
    if not isinstance(message, dict):
        return f"not a JSON object but {json_type(message)}"
    if "id" in message and not _is_id(message["id"]):
        return f"id must be a string, an integer or null, not {json_type(message['id'])}"
    if "method" in message and not isinstance(message["method"], str):
        return f"method must be a string, not {json_type(message['method'])}"
    if "method" not in message and "error" in message and not isinstance(message["error"],
                                                                          dict):
        return f"error must be an object, not {json_type(message['error'])}"
    return None


def _is_id(value: object) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int)
                                                       and not isinstance(value, bool))


def json_type(value: object) -> str:
    """What a parsed JSON value is, as JSON names it ("an object", "a number", "null")."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)

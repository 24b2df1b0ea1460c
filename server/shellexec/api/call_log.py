"""The server's log: one JSON line per call, written by the call interceptor (docs/operations.md,
"Logs").

A line holds what an operator needs to follow a call and nothing a caller sent as content:
`time` (RFC 3339, UTC, milliseconds), `request_id`, `method`, `status` (the gRPC code's name),
`duration_ms`, `session_id` when the call named a session (an id of the server's form only),
and, for an unexpected failure, the exception's type and where it was raised (`error`,
`origin`), never its text. Output, updates and metadata (tokens) are never written.

`SHELLEXEC_LOG` chooses which calls are written: every call (`calls`, the default), those that
did not end OK (`errors`), or none (`off`).
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from typing import Final, Literal, TextIO

import grpc

LogLevel = Literal["calls", "errors", "off"]
LOG_CALLS: Final[LogLevel] = "calls"
LOG_ERRORS: Final[LogLevel] = "errors"
LOG_OFF: Final[LogLevel] = "off"
LOG_LEVELS: Final[tuple[LogLevel, ...]] = (LOG_CALLS, LOG_ERRORS, LOG_OFF)
UNKNOWN_METHOD: Final = "unknown"
"""The method of a call to one the server does not serve, in the log and the metrics: the
caller's path could be anything, and a metric label must come from a fixed set."""


def log_level(word: str) -> LogLevel:
    """`word` as a `LogLevel`, read as every other setting is: in any case, without the
    spaces around it, and empty for the default (`calls`); ValueError naming the setting
    for any other word."""
    word = word.strip().lower() or LOG_CALLS
    for level in LOG_LEVELS:
        if word == level:
            return level
    raise ValueError(f"SHELLEXEC_LOG must be one of {', '.join(LOG_LEVELS)}, not {word[:16]!r}")


@functools.lru_cache(maxsize=2)
def _whole_second(seconds: int) -> str:
    # Calls in the same second share its text: formatting it is most of a line's cost.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def rfc3339(seconds: float) -> str:
    """`seconds` since the epoch as RFC 3339 UTC with milliseconds: 2026-12-01T11:04:46.123Z."""
    whole, millis = divmod(int(seconds * 1000 + 0.5), 1000)
    return f"{_whole_second(whole)}.{millis:03d}Z"


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What one finished call leaves in the log."""

    started: float
    """When the call began (`time.time()`)."""
    request_id: str
    method: str
    status: grpc.StatusCode
    duration_ms: float
    session_id: str = ""
    error: str = ""
    """The type of an unexpected exception, with `origin` where it was raised."""
    origin: str = ""


class CallLog:
    """Writes call records to `stream` as JSON lines, as many as `level` asks for."""

    def __init__(self, stream: TextIO, level: LogLevel = LOG_CALLS) -> None:
        self._stream = stream
        self._level = level

    def wants(self, status: grpc.StatusCode) -> bool:
        if self._level == LOG_CALLS:
            return True
        return self._level == LOG_ERRORS and status != grpc.StatusCode.OK

    def write(self, record: CallRecord) -> None:
        if not self.wants(record.status):
            return
        line: dict[str, object] = {
            "time": rfc3339(record.started), "request_id": record.request_id,
            "method": record.method, "status": record.status.name,
            "duration_ms": round(record.duration_ms, 3)}
        if record.session_id:
            line["session_id"] = record.session_id
        if record.error:
            line["error"] = record.error
            line["origin"] = record.origin
        self._stream.write(json.dumps(line) + "\n")
        self._stream.flush()

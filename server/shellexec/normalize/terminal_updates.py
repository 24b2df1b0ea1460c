"""Reading an ACP v2 "Terminal Output" update without trusting its shape.

| update | field | meaning |
| --- | --- | --- |
| `terminal_update` | `terminalId` | the terminal (required) |
| | `command`, `cwd` | the command line and its directory; omitted or null: not stated here |
| | `output.data` | base64 of the terminal's whole output so far: replaces it |
| | `output: null` | the output is cleared |
| | `exitStatus{exitCode, signal}` | how the process ended |
| | `exitStatus: null` | the exit status is cleared |
| `terminal_output_chunk` | `terminalId`, `data` | base64 bytes appended to the output |

Base64 that does not decode (or holds other characters) states nothing: the fold never
raises. The request validation refuses it on the ingest routes. A chunk may end inside a
UTF-8 sequence: these are bytes, joined before decoding by `terminal_fold`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from shellexec.normalize.access import JsonObject, nonblank_at, obj
from shellexec.normalize.exit_codes import parse_exit_code
from shellexec.normalize.text import valid_text
from shellexec.rules.limits import MAX_TERMINAL_SIGNAL_CHARS
from shellexec.vocabulary import (
    ACP_TERMINAL_OUTPUT_CHUNK,
    ACP_TERMINAL_UPDATE,
    ACP_TERMINAL_UPDATES,
    ACP_TOOL_UPDATES,
    META_TERMINAL_TOOL_CALL,
)

# The `type` of a content item that names a terminal (ACP's word, also a live source's).
_CONTENT_TERMINAL = "terminal"


@dataclass(frozen=True, slots=True)
class ExitStatus:
    """A terminal's `exitStatus`: its code, or the signal that ended it (either may be None)."""

    exit_code: int | None
    signal: str | None


@dataclass(frozen=True, slots=True)
class TerminalReport:
    """What one terminal update states; None (or False) means "not stated"."""

    terminal_id: str
    command: str | None = None
    cwd: str | None = None
    snapshot: bytes | None = None
    output_cleared: bool = False
    chunk: bytes | None = None
    exit_status: ExitStatus | None = None
    exit_cleared: bool = False


def is_terminal_update(update: object) -> bool:
    """Whether `update` is one of the v2 terminal updates."""
    return obj(update).get("sessionUpdate") in ACP_TERMINAL_UPDATES


def terminal_id_of(update: object) -> str | None:
    """The `terminalId` of a terminal update, None when it has none."""
    return nonblank_at(update, "terminalId") if is_terminal_update(update) else None


def link_hint(update: object) -> str | None:
    """The tool call a hosting client says the terminal belongs to (`_meta`), if any."""
    return nonblank_at(obj(update).get("_meta"), META_TERMINAL_TOOL_CALL)


def terminal_blocks(update: object) -> Iterator[tuple[int, str]]:
    """Each terminal a tool update's `content` names (`{"type": "terminal", ...}`), with the
    index of the block that names it, in order; a terminal named twice comes twice."""
    found = obj(update)
    content = found.get("content")
    if found.get("sessionUpdate") not in ACP_TOOL_UPDATES or not isinstance(content, list):
        return
    for index, item in enumerate(content):
        if obj(item).get("type") == _CONTENT_TERMINAL:
            terminal_id = nonblank_at(item, "terminalId")
            if terminal_id is not None:
                yield index, terminal_id


def terminal_refs(update: object) -> tuple[str, ...]:
    """The terminal ids a tool update's `content` names, in order, each once."""
    return tuple(dict.fromkeys(terminal_id for _, terminal_id in terminal_blocks(update)))


def read_terminal_update(update: object) -> TerminalReport | None:
    """What a terminal update states, or None when `update` is no terminal update."""
    terminal_id = terminal_id_of(update)
    if terminal_id is None:
        return None
    found = obj(update)
    if found.get("sessionUpdate") == ACP_TERMINAL_OUTPUT_CHUNK:
        return TerminalReport(terminal_id, chunk=decode_data(found.get("data")))
    assert found.get("sessionUpdate") == ACP_TERMINAL_UPDATE
    return TerminalReport(
        terminal_id,
        command=nonblank_at(found, "command"),
        cwd=nonblank_at(found, "cwd"),
        snapshot=decode_data(obj(found.get("output")).get("data")),
        output_cleared="output" in found and found["output"] is None,
        exit_status=_exit_status(found),
        exit_cleared="exitStatus" in found and found["exitStatus"] is None,
    )


def decode_data(value: object) -> bytes | None:
    """The bytes of a base64 `data` string (standard alphabet, padded), None if it is none."""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None


def _exit_status(update: JsonObject) -> ExitStatus | None:
    status = update.get("exitStatus")
    if not isinstance(status, Mapping):
        return None
    signal = status.get("signal")
    named = valid_text(signal).strip() if isinstance(signal, str) else ""
    named = named[:MAX_TERMINAL_SIGNAL_CHARS]
    return ExitStatus(parse_exit_code(status.get("exitCode")), named or None)

"""Live output in an agent's own `_meta` key: Goose's `_meta.toolNotification`.

Goose streams a running command as `tool_call_update`s with

    "_meta": {"toolNotification": {"type": "live_output", "params": {
        "sequence": 3, "truncated": false,
        "chunks": [{"stream": "stdout", "output": "line\\n"}, {"stream": "stderr", ...}]}}}

Each chunk is new text (a delta) of one stream, so stdout and stderr stay apart: stdout chunks
join the `_meta.terminal_output_delta` path (exact terminal text: later `content` copies are
ignored), stderr chunks are appended to stderr. Goose stops streaming after 256 KiB and says so
once with `truncated: true` and no chunks: that is Goose's bound, not ours, so it sets nothing
(the final `rawOutput` follows).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from shellexec.normalize.access import obj, text_at
from shellexec.normalize.state import ShellState
from shellexec.normalize.text import OutputText

_LIVE_OUTPUT: Final = "live_output"
_STDERR: Final = "stderr"
_STDOUT: Final = "stdout"


@dataclass(frozen=True, slots=True)
class LiveChunks:
    """The text one notification adds to each stream (None: nothing for that stream)."""

    stdout: str | None = None
    stderr: str | None = None


def goose_live_output(meta: object) -> LiveChunks | None:
    """The chunks of a Goose `live_output` notification, or None when there is none."""
    notification = obj(obj(meta).get("toolNotification"))
    if notification.get("type") != _LIVE_OUTPUT:
        return None
    chunks = obj(notification.get("params")).get("chunks")
    if not isinstance(chunks, list):
        return LiveChunks()
    streams: dict[str, list[str]] = {_STDOUT: [], _STDERR: []}
    for chunk in chunks:
        output = text_at(chunk, "output")
        stream = obj(chunk).get("stream")
        if output and isinstance(stream, str) and stream in streams:
            streams[stream].append(output)
    return LiveChunks("".join(streams[_STDOUT]) or None, "".join(streams[_STDERR]) or None)


def append_stderr(state: ShellState, chunk: str) -> ShellState:
    """`state` with live stderr text appended, unless a final result already set stderr."""
    if state.stderr_final or not chunk:
        return state
    stream = state.stderr if state.stderr is not None else OutputText.of("")
    return replace(state, stderr=stream.append(chunk))

"""How each kind of output report changes the two streams.

- `_meta.terminal_output_delta`: appended. From then on `content` text is ignored: it is a
  presentation copy of the exact terminal stream.
- `_meta.terminal_output` of a Codex-shaped call: appended (Codex sends chunks).
- `_meta.terminal_output` of a Claude-shaped call: replaces stdout (Claude sends the whole
  output so far; its own v2 conversion reads it as a replacement snapshot).
- `_meta.terminal_output` of any other call: what extends the stream is appended. Equal to
  the stream: nothing (a repeated snapshot). Starting with the stream: the new tail (a
  growing snapshot). Anything else: all of it (a chunk). See ADR 0011.
- cumulative `content` text: replaces stdout, unless `_meta` terminal output came first;
  deltas arriving later still append to it. On a terminal update it is final, as `rawOutput`
  text is: text or a delta arriving later (a running call's, reordered) is ignored.
- `rawOutput` text: replaces each field it states. On a terminal update the field becomes
  final: live text arriving later is already part of it and is ignored. Codex's combined
  text (`formatted_output`, `aggregated_output`) on a terminal update of a Codex call is its
  authoritative output: it replaces even the transcript of the agent's own ACP terminal,
  whose chunks are Codex's capped live deltas, and later terminal output is ignored; never
  that of a terminal a client hosts (`host_client`), the process's own.
- plain `rawOutput` text (a bare string or text blocks) is only a fallback for agents without
  the `_meta` terminal extension: once `_meta` terminal output arrived it is ignored, and the
  first `_meta` terminal output arriving after it replaces it, final or not (ADR 0012).

The first chunk of a stream fed chunk by chunk may begin with the `$ <command>` echo: it is
removed there (a line break arriving in the next chunk goes with it). Snapshot and final
texts arrive whole, so the caller removes the echo from each before handing it over.
"""

from __future__ import annotations

from dataclasses import replace

from shellexec.normalize.echo import drop_separator, presentation_line, strip_presentation
from shellexec.normalize.raw_output import FinalOutput
from shellexec.normalize.state import EchoPhase, ShellState
from shellexec.normalize.text import OutputText


def append_chunk(state: ShellState, chunk: str) -> ShellState:
    """`state` with a live `_meta` terminal chunk appended to stdout."""
    state = _terminal_heard(state)
    if state.stdout_final:
        return state
    chunk, echo = _without_echo(state, chunk)
    stream = state.stdout if state.stdout is not None else OutputText.of("")
    return replace(state, stdout=stream.append(chunk), echo=echo)


def apply_terminal_output(state: ShellState, data: str) -> ShellState:
    """`state` after a `_meta.terminal_output` payload (see the module rules)."""
    state = _terminal_heard(state)
    stream = state.stdout
    if state.terminal_snapshots and not state.terminal_chunks:
        return _with_terminal_snapshot(state, data)
    if state.terminal_chunks or stream is None or stream.total_bytes == 0:
        return append_chunk(state, data)
    extension = stream.extension_of(data)
    return append_chunk(state, data if extension is None else extension)


def _with_terminal_snapshot(state: ShellState, data: str) -> ShellState:
    """`state` with stdout replaced by a whole-output `_meta.terminal_output` (its echo off)."""
    if state.stdout_final:
        return state
    text = strip_presentation(data, presentation_line(state.command, state.title))[0]
    return replace(state, stdout=_replaced(state.stdout, text), echo="done")


def apply_snapshot(state: ShellState, text: str, terminal: bool) -> ShellState:
    """`state` after cumulative output text (already without its echo); `terminal` when the
    call has finished. A finished call's text is its final output: any text arriving later,
    a running call's reordered one included, is ignored, as it is after a final `rawOutput`
    text."""
    if state.stdout_final or state.live_source == "terminal":
        return state
    stdout = _replaced(state.stdout, text)
    return replace(state, stdout=stdout, stdout_final=terminal, stdout_fallback=False,
                   live_source="content", echo="done")


def apply_final(state: ShellState, final: FinalOutput, terminal: bool) -> ShellState:
    """`state` after a `rawOutput` result; `terminal` when the call has finished."""
    if final.stdout is not None and _final_replaces_stdout(state, final.plain, terminal):
        line = presentation_line(state.command, state.title)
        text = strip_presentation(final.stdout, line)[0]
        stdout = _replaced(state.stdout, text)
        state = replace(state, stdout=stdout, stdout_final=terminal,
                        stdout_fallback=final.plain, echo="done",
                        stdout_authoritative=terminal and final.combined)
    if final.stderr is not None and (terminal or not state.stderr_final):
        state = replace(state, stderr=_replaced(state.stderr, final.stderr), stderr_final=terminal)
    return state


def apply_hosted_final(state: ShellState, final: FinalOutput, terminal: bool) -> ShellState:
    """`state`, whose ACP terminal owns its output, after a `rawOutput` result: only Codex's
    combined text on a finished Codex call replaces the transcript of the agent's own
    terminal (its chunks are Codex's own live deltas, which it caps); any other text of the
    agent's, and any text over a terminal a client hosts, is not the output (ADR 0085)."""
    if not (terminal and final.combined and final.stdout is not None
            and state.terminal_chunks and not state.host_client):
        return state
    text = strip_presentation(final.stdout, presentation_line(state.command, state.title))[0]
    return replace(state, stdout=_replaced(state.stdout, text), stdout_final=True,
                   stdout_authoritative=True, host_pending=b"")


def _final_replaces_stdout(state: ShellState, plain: bool, terminal: bool) -> bool:
    if plain and state.live_source == "terminal":
        return False  # the exact terminal stream outranks the agent's plain text copy
    return terminal or not state.stdout_final


def _terminal_heard(state: ShellState) -> ShellState:
    """`state` once `_meta` terminal output arrived: it takes over from plain `rawOutput` text.

    Cheap when nothing changes: it runs for every live chunk.
    """
    if state.stdout_fallback:
        # Starts a fresh stream, so the echo rule applies to its first chunk as to any.
        return replace(state, stdout=None, stdout_final=False, stdout_fallback=False,
                       live_source="terminal", echo="pending")
    if state.live_source == "terminal":
        return state
    return replace(state, live_source="terminal")


def _replaced(old: OutputText | None, text: str) -> OutputText:
    """A stream holding `text`; `old` itself when it already holds exactly that."""
    new = OutputText.of(text)
    return old if old is not None and old == new else new


def _without_echo(state: ShellState, chunk: str) -> tuple[str, EchoPhase]:
    """The chunk without the echo that may lead it, and the echo phase after it."""
    if state.echo == "separator":
        return drop_separator(chunk), "done" if chunk else "separator"
    if state.echo == "done" or not chunk:
        return chunk, state.echo
    if state.stdout is not None and state.stdout.total_bytes > 0:
        return chunk, "done"
    line = presentation_line(state.command, state.title)
    rest, stripped = strip_presentation(chunk, line)
    ends_at_echo = stripped and not rest and not chunk.endswith("\n")
    return rest, "separator" if ends_at_echo else "done"

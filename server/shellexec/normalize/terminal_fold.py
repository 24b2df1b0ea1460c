"""Folding an ACP terminal's updates into the record of the tool call it belongs to.

A terminal's output and exit status are the process's own, so they rank above what the agent
reports about the same command (ADR 0085):

- The first terminal update, whatever it carries, makes the terminal the owner of the call's
  output: stdout becomes the terminal's transcript (combined, as a terminal shows it; empty
  until it prints), stderr is dropped (it is part of that transcript), and from then on the
  agent's `content`, `_meta` terminal output and `rawOutput` texts are ignored (an agent's
  summary, such as a 50-line tail, is not the output). The agent's exit codes still count
  below the terminal's. One text of the agent's outranks the agent's own terminal: Codex's
  combined end text on a finished Codex call (`formatted_output`, the spec's authoritative
  output), before or after the terminal's updates; that terminal's output is ignored once
  it is there. Never a terminal a client hosts (`host_client`: its updates name the call in
  `_meta.shellexec_tool_call_id`): its transcript is the process's own.
- `output.data` (a snapshot) replaces stdout; `output: null` empties it; a chunk's bytes are
  appended. Bytes are joined before decoding, so a UTF-8 sequence split between two chunks
  comes out whole; an incomplete sequence at the end waits for the next chunk
  (`host_pending`), and becomes U+FFFD when the terminal reports its exit; invalid bytes
  become U+FFFD. The usual bound applies (newest bytes kept).
- `exitStatus.exitCode` is an exit code of rank `HOST`; a `signal` without an exit code
  leaves the code unknown but marks the call signalled: a call the agent reports `completed`
  then shows `failed`. `exitStatus: null` clears what the terminal said about its exit.
- `command` and `cwd` fill the record's command and directory when the agent named none.
- Any terminal update marks the call as a shell command: a terminal runs one.

The status stays the agent's: a terminal that exited does not finish the call (the prompt's
end still cancels a call the agent never finished).
"""

from __future__ import annotations

import codecs
from dataclasses import replace

from shellexec.normalize.exit_codes import ExitRank
from shellexec.normalize.state import ShellState
from shellexec.normalize.terminal_updates import (
    ExitStatus,
    TerminalReport,
    link_hint,
    read_terminal_update,
)
from shellexec.normalize.text import OutputText


def fold_terminal(state: ShellState, update: object) -> ShellState:
    """The state after one terminal update of the call's terminal (any JSON; never raises)."""
    report = read_terminal_update(update)
    if report is None:
        return state
    # Any update of the terminal owns the output, also one with no output in it (the
    # `terminal_update{command, cwd}` a hosting client sends at create): a command that
    # prints nothing has an empty transcript, not the agent's text.
    state = _owned(_identified(state, report), hosted=link_hint(update) is not None)
    if report.snapshot is not None or report.output_cleared:
        state = _with_snapshot(state, report.snapshot or b"")
    if report.chunk is not None:
        state = _with_chunk(state, report.chunk)
    if report.exit_cleared:
        state = _exit_cleared(state)
    if report.exit_status is not None:
        state = _with_exit_status(_flushed(state), report.exit_status)
    return state


def _identified(state: ShellState, report: TerminalReport) -> ShellState:
    if state.is_shell and (state.command or not report.command) and (
            state.work_dir or not report.cwd):
        return state
    return replace(state, is_shell=True, command=state.command or report.command,
                   work_dir=state.work_dir or report.cwd)


def _owned(state: ShellState, hosted: bool) -> ShellState:
    """`state` with its output owned by the terminal (a fresh, empty stream the first time,
    unless it holds Codex's authoritative end text and the terminal is the agent's own); a
    terminal a client hosts owns it whatever the agent said before."""
    if state.host_output:
        if state.host_client or not hosted:
            return state
        if not state.stdout_authoritative:
            return replace(state, host_client=True)
    if state.stdout_authoritative and not hosted:
        return replace(state, stderr=None, stderr_final=False, live_source="terminal",
                       echo="done", host_output=True, host_pending=b"")
    return replace(state, stdout=OutputText.of(""), stderr=None, stdout_final=False,
                   stderr_final=False, stdout_fallback=False, live_source="terminal",
                   echo="done", host_output=True, host_pending=b"", host_client=hosted,
                   stdout_authoritative=False)


def _decoded(pending: bytes, data: bytes) -> tuple[str, bytes]:
    """The text of `pending + data` and the incomplete UTF-8 sequence it ends with."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    decoder.setstate((pending, 0))
    text = decoder.decode(data)
    return text, decoder.getstate()[0]


def _with_snapshot(state: ShellState, data: bytes) -> ShellState:
    if state.stdout_authoritative:
        return state
    text, pending = _decoded(b"", data)
    stream = OutputText.of(text)
    if state.stdout is not None and state.stdout == stream:
        stream = state.stdout
    return replace(state, stdout=stream, host_pending=pending)


def _with_chunk(state: ShellState, data: bytes) -> ShellState:
    if state.stdout_authoritative:
        return state
    text, pending = _decoded(state.host_pending, data)
    stream = state.stdout if state.stdout is not None else OutputText.of("")
    return replace(state, stdout=stream.append(text), host_pending=pending)


def _flushed(state: ShellState) -> ShellState:
    """`state` with an incomplete UTF-8 sequence at the end drawn as U+FFFD: the process
    exited, so no byte will complete it."""
    if not state.host_pending or state.stdout is None:
        return state
    return replace(state, stdout=state.stdout.append("\ufffd"), host_pending=b"")


def _exit_cleared(state: ShellState) -> ShellState:
    if state.exit_rank != ExitRank.HOST:
        return state
    return replace(state, exit_code=None, exit_rank=ExitRank.NONE, host_signal=None)


def _with_exit_status(state: ShellState, status: ExitStatus) -> ShellState:
    if status.exit_code is not None:
        return replace(state, exit_code=status.exit_code, exit_rank=ExitRank.HOST,
                       host_signal=None)
    if status.signal is not None:
        return replace(state, exit_code=None, exit_rank=ExitRank.HOST,
                       host_signal=status.signal)
    return state

"""The normalized record of a tool call: what a client is told about the command."""

from __future__ import annotations

from dataclasses import dataclass

from shellexec.normalize.output import ShellOutput
from shellexec.normalize.state import ShellState
from shellexec.normalize.text import bounded_head
from shellexec.normalize.vocabulary import Result, ShellStatus


@dataclass(frozen=True, slots=True)
class ShellRecord:
    """The normalized record of one tool call.

    `command` is None until an update names it; a client then shows `title` instead (the
    message content is the fallback). `work_dir` is the command's directory when reported.
    A call that is not a shell command (`is_shell` false) has neither: what its arguments
    name (a viewer's `view`, an MCP tool's `command` argument) is no command, though the
    state keeps it in case a later update makes the call one.
    """

    is_shell: bool
    command: str | None
    work_dir: str | None
    title: str | None
    description: str | None
    status: ShellStatus
    result: Result
    output: ShellOutput


def shell_record(state: ShellState) -> ShellRecord:
    """The record of `state`, output bodies included (joining them costs O(output) once).

    Its texts are bounded as a stored message's are (`bounded_head`), so that Normalize
    answers what a publish stores and serves; a call that is not a shell command has no
    command or directory (see `ShellRecord`)."""
    shell = state.is_shell
    return ShellRecord(
        is_shell=shell,
        command=_bounded(state.command) if shell else None,
        work_dir=_bounded(state.work_dir) if shell else None,
        title=_bounded(state.title),
        description=_bounded(state.description),
        status=state.status,
        result=state.result,
        output=ShellOutput(
            exit_code=state.exit_code,
            stdout=None if state.stdout is None else state.stdout.text,
            stderr=None if state.stderr is None else state.stderr.text,
            truncated=state.truncated,
        ),
    )


def _bounded(text: str | None) -> str | None:
    return None if text is None else bounded_head(text)

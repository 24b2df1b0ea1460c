"""The full output of a command and the browser-facing summary of it.

`ShellOutput` is what the shell-output route serves. `OutputSummary` is what every list, boot
state and feed payload carries instead: it has no body fields at all, so a body cannot leak
through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from shellexec.normalize.text import to_utf8


@dataclass(frozen=True, slots=True)
class ShellOutput:
    """A command's normalized output.

    `None` means unavailable (never reported); `""` means reported and empty. `stdout` is the
    combined terminal stream unless the agent reported the streams apart; `stderr` only ever
    comes from an explicit stderr field. `truncated` is true when either text hit the bound.
    """

    exit_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class OutputSummary:
    """The body-free summary of a `ShellOutput` that browser-facing payloads carry."""

    exit_code: int | None
    truncated: bool
    has_output: bool
    stdout_bytes: int
    stderr_bytes: int


def summary_of(exit_code: int | None, truncated: bool, stdout_bytes: int,
               stderr_bytes: int) -> OutputSummary:
    """The summary of an output whose streams hold these many UTF-8 bytes."""
    return OutputSummary(
        exit_code=exit_code,
        truncated=truncated,
        has_output=stdout_bytes > 0 or stderr_bytes > 0,
        stdout_bytes=stdout_bytes,
        stderr_bytes=stderr_bytes,
    )


def summarize(output: ShellOutput) -> OutputSummary:
    """The summary of `output`: exit code, truncation, and UTF-8 byte counts of the bodies."""
    return summary_of(output.exit_code, output.truncated, _utf8_length(output.stdout),
                      _utf8_length(output.stderr))


def _utf8_length(text: str | None) -> int:
    return 0 if text is None else len(to_utf8(text)[1])

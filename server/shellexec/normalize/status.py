"""Status and result: how the agent's ACP status, the exit code and the turn combine.

The agent's reported status only moves forward (`pending` < `running` < terminal), and the
first terminal status it reports stays: a late or reordered `in_progress` cannot reopen a
finished command, nor a second terminal status rewrite it.

| reported by the agent | exit code | prompt ended | status |
| --- | --- | --- | --- |
| `complete` | known, nonzero | any | `failed` (OpenCode reports exit 2 as completed) |
| `complete` | a signal ended its terminal | any | `failed` (Vibe says exit 0 for a kill) |
| `complete`, `failed`, `cancelled` | any other | any | as reported |
| `pending`, `running` | any | no | as reported |
| `pending`, `running` | any | yes (`cancel`) | `cancelled` |

| status | exit code | result |
| --- | --- | --- |
| `pending`, `running` | any | `running` |
| terminal | known, nonzero | `failure` |
| `failed` | 0 or unknown | `failure` |
| `complete` | 0 | `success` |
| `complete` or `cancelled` | unknown; `cancelled` with 0 | `unknown` (neutral) |
"""

from __future__ import annotations

from typing import Final

from shellexec.normalize.vocabulary import Result, ShellStatus, is_terminal
from shellexec.vocabulary import (
    RESULT_FAILURE,
    RESULT_RUNNING,
    RESULT_SUCCESS,
    RESULT_UNKNOWN,
    STATUS_CANCELLED,
    STATUS_COMPLETE,
    STATUS_FAILED,
    STATUS_PENDING,
    STATUS_RUNNING,
)

_PROGRESS: Final[dict[ShellStatus, int]] = {
    STATUS_PENDING: 0,
    STATUS_RUNNING: 1,
    STATUS_COMPLETE: 2,
    STATUS_FAILED: 2,
    STATUS_CANCELLED: 2,
}


def advance(current: ShellStatus, reported: ShellStatus | None) -> ShellStatus:
    """The agent's status after it reports `reported` (None: it reported nothing)."""
    if reported is None or is_terminal(current):
        return current
    return reported if _PROGRESS[reported] >= _PROGRESS[current] else current


def shell_status(
    reported: ShellStatus, cancelled_by_prompt: bool, exit_code: int | None,
    *, signalled: bool = False,
) -> ShellStatus:
    """The public status of a command (first table of the module); `signalled` when a
    signal ended its terminal's process (it did not complete, whatever the agent says)."""
    if reported == STATUS_COMPLETE and (exit_code not in (None, 0) or signalled):
        return STATUS_FAILED
    if cancelled_by_prompt and not is_terminal(reported):
        return STATUS_CANCELLED
    return reported


def shell_result(status: ShellStatus, exit_code: int | None) -> Result:
    """The public result of a command (second table of the module)."""
    if not is_terminal(status):
        return RESULT_RUNNING
    if (exit_code is not None and exit_code != 0) or status == STATUS_FAILED:
        return RESULT_FAILURE
    if status == STATUS_COMPLETE and exit_code == 0:
        return RESULT_SUCCESS
    return RESULT_UNKNOWN

"""The words the normalized record uses: statuses, results, the output bound.

The statuses and results are the public contract's words (`docs/api.md`), defined once in
`shellexec.vocabulary` and re-exported here for the normalizer's modules. ACP's own status
words are translated here and nowhere else.
"""

from __future__ import annotations

from typing import Final

from shellexec.vocabulary import (
    ACP_COMPLETED,
    ACP_FAILED,
    ACP_IN_PROGRESS,
    ACP_PENDING,
    RESULTS,
    SHELL_STATUSES,
    STATUS_CANCELLED,
    STATUS_COMPLETE,
    STATUS_FAILED,
    STATUS_PENDING,
    STATUS_RUNNING,
    TERMINAL_STATUSES,
    Result,
    ShellStatus,
    is_terminal,
)

__all__ = [
    "MAX_FIELD_BYTES",
    "RESULTS",
    "SHELL_STATUSES",
    "TERMINAL_STATUSES",
    "Result",
    "ShellStatus",
    "is_terminal",
    "parse_acp_status",
]

from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES

MAX_FIELD_BYTES: Final = MAX_OUTPUT_STREAM_BYTES
"""The most UTF-8 bytes one output text field (stdout or stderr) retains: 256 KiB."""

# ACP `ToolCallStatus` (v1: pending, in_progress, completed, failed; v2 adds cancelled and
# paused) plus the spellings agents are known to use. A paused call has not finished, so it
# reads as running. Words not listed carry no status information. The keys are the agents'
# spellings, not ours: they stay literals (tests/test_vocabulary.py allows them here).
_ACP_STATUS: Final[dict[str, ShellStatus]] = {
    ACP_PENDING: STATUS_PENDING,
    ACP_IN_PROGRESS: STATUS_RUNNING,
    "running": STATUS_RUNNING,
    "paused": STATUS_RUNNING,
    ACP_COMPLETED: STATUS_COMPLETE,
    "complete": STATUS_COMPLETE,
    ACP_FAILED: STATUS_FAILED,
    "error": STATUS_FAILED,
    "cancelled": STATUS_CANCELLED,
    "canceled": STATUS_CANCELLED,
}


def parse_acp_status(value: object) -> ShellStatus | None:
    """The shell status an ACP `status` value means, or None when it means nothing known."""
    if not isinstance(value, str):
        return None
    return _ACP_STATUS.get(value.strip().lower())

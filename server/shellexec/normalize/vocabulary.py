"""The words the normalized record uses: statuses, results, the output bound.

These are the values of the public contract (`docs/api.md`); every other module
of the package speaks in them. ACP's own status words are translated here and nowhere else.
"""

from __future__ import annotations

from typing import Final, Literal

from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES

MAX_FIELD_BYTES: Final = MAX_OUTPUT_STREAM_BYTES
"""The most UTF-8 bytes one output text field (stdout or stderr) retains: 256 KiB."""

ShellStatus = Literal["pending", "running", "complete", "failed", "cancelled"]
Result = Literal["running", "success", "failure", "unknown"]

SHELL_STATUSES: Final[tuple[ShellStatus, ...]] = (
    "pending",
    "running",
    "complete",
    "failed",
    "cancelled",
)
"""Every status a shell tool call can have, in the order a call moves through them."""

TERMINAL_STATUSES: Final[tuple[ShellStatus, ...]] = ("complete", "failed", "cancelled")
"""The statuses after which a command no longer runs."""

RESULTS: Final[tuple[Result, ...]] = ("running", "success", "failure", "unknown")

# ACP `ToolCallStatus` (v1: pending, in_progress, completed, failed; v2 adds cancelled and
# paused) plus the spellings agents are known to use. A paused call has not finished, so it
# reads as running. Words not listed carry no status information.
_ACP_STATUS: Final[dict[str, ShellStatus]] = {
    "pending": "pending",
    "in_progress": "running",
    "running": "running",
    "paused": "running",
    "completed": "complete",
    "complete": "complete",
    "failed": "failed",
    "error": "failed",
    "cancelled": "cancelled",
    "canceled": "cancelled",
}


def parse_acp_status(value: object) -> ShellStatus | None:
    """The shell status an ACP `status` value means, or None when it means nothing known."""
    if not isinstance(value, str):
        return None
    return _ACP_STATUS.get(value.strip().lower())


def is_terminal(status: ShellStatus) -> bool:
    """Whether a command with this status has stopped running."""
    return status in TERMINAL_STATUSES

"""What a tool call's fold state puts in the columns of its message row.

The columns are what list, boot-state and feed payloads read (see `message`), so they are
computed when the state is saved, from the state's O(1) accessors: `normalize.shell_record`
would join the output bodies.
"""

from __future__ import annotations

import json

from shellexec import normalize
from shellexec.normalize import ShellState, bounded_head
from shellexec.vocabulary import MESSAGE_SHELL, MESSAGE_TOOL


def state_columns(state: ShellState) -> dict[str, object]:
    """The message row's column values for `state`, named as the `Message` fields."""
    summary = state.summary()
    title = bounded_head(state.title or "")
    command = bounded_head(state.command or "")
    return {
        "is_shell": state.is_shell,
        "type": MESSAGE_SHELL if state.is_shell else MESSAGE_TOOL,
        "status": state.status,
        "title": title,
        "command": command,
        "work_dir": bounded_head(state.work_dir or ""),
        "content": command or title,
        "exit_code": summary.exit_code,
        "truncated": summary.truncated,
        "has_output": summary.has_output,
        "stdout_bytes": summary.stdout_bytes,
        "stderr_bytes": summary.stderr_bytes,
        "fold_state": json.dumps(normalize.dump_state(state), separators=(",", ":")),
    }

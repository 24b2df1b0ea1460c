"""What a tool call's fold state puts in the columns of its message row.

The columns are what list, boot-state and feed payloads read (see `message`), so they are
computed when the state is saved, from the state's O(1) accessors: `normalize.shell_record`
would join the output bodies.
"""

from __future__ import annotations

import json
from typing import Final

from shellexec import normalize
from shellexec.normalize import ShellState, bounded_head
from shellexec.normalize.serialize import RENAMED_KEYS
from shellexec.store.models import Message
from shellexec.vocabulary import MESSAGE_SHELL, MESSAGE_TOOL

# Keys of the fold-state record that name a column of the row holding the same value when it
# fits the column (a command within the stored bound): the record then leaves them out, so a
# long command is not stored twice in every write of its row (ADR 0113). A call that is not a
# shell command has `""` in its command and directory columns: the record keeps what the
# state knows of them, so a later update can still make the call a command that shows them.
RECORD_KEYS_IN_COLUMNS: Final = ("is_shell", "command", "title", "work_dir")


def state_columns(state: ShellState) -> dict[str, object]:
    """The message row's column values for `state`, named as the `Message` fields.

    A call that is not a shell command stores no command and no directory, and its content is
    its title (`normalize.ShellRecord`): what its arguments name stays in the record only."""
    summary = state.summary()
    title = bounded_head(state.title or "")
    command = _shell_text(state, state.command)
    columns: dict[str, object] = {
        "is_shell": state.is_shell,
        "type": MESSAGE_SHELL if state.is_shell else MESSAGE_TOOL,
        "status": state.status,
        "title": title,
        "command": command,
        "work_dir": _shell_text(state, state.work_dir),
        "content": command or title,
        "exit_code": summary.exit_code,
        "truncated": summary.truncated,
        "has_output": summary.has_output,
        "stdout_bytes": summary.stdout_bytes,
        "stderr_bytes": summary.stderr_bytes,
    }
    record = normalize.dump_state(state)
    for key in RECORD_KEYS_IN_COLUMNS:
        if key in record and record[key] == columns[key]:
            del record[key]
    columns["fold_state"] = json.dumps(record, separators=(",", ":"))
    return columns


def _shell_text(state: ShellState, text: str | None) -> str:
    """A shell command's `text` as its column holds it; `""` for any other call."""
    return bounded_head(text or "") if state.is_shell else ""


def state_record(row: Message) -> dict[str, object]:
    """The fold-state record a tool call's row stores, with what its columns hold put back
    (`normalize.load_state` reads it; a record written before it left keys out keeps its own
    values, under a key's old name too: a column may hold only the head of a long value)."""
    record: dict[str, object] = json.loads(row.fold_state) if row.fold_state else {}
    for key in RECORD_KEYS_IN_COLUMNS:
        former = RENAMED_KEYS.get(key)
        if key not in record and (former is None or former not in record):
            record[key] = getattr(row, key)
    return record

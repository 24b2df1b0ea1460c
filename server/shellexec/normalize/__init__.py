"""Normalization: every agent's ACP shell tool-call stream becomes one `ShellRecord`.

A pure fold (no I/O, no clock, no globals) over the `params.update` objects of the
`session/update` notifications of ONE tool call:

    state = new_state(agent="codex")          # the hint is optional
    for update in updates:                    # any JSON values, in arrival order
        state = fold(state, update)           # never raises
    shown = shell_record(state)               # command, work_dir, status, result, output
    summary = summarize(shown.output)         # what browser-facing payloads carry

The rules, one module each (read them to integrate a new agent; `docs/normalization.md`
has them as tables):

- `commands`: is it a shell command, which command, which directory;
- `streams`, `content`, `echo`: live output (deltas, snapshots, the `$ cmd` echo);
- `raw_output`, `markup`: the authoritative final result of each agent;
- `exit_codes`: where exit codes come from and which source wins;
- `status`: status and result (`shell_result` also gives a stored row its result);
- `text`: the 256 KiB bound (newest bytes of an output, first bytes of other text) and
  valid UTF-8;
- `serialize`, `changes`: persisting a state and its output cheaply;
- `terminal_updates`, `terminal_fold`, `terminal_links`: ACP v2 terminal updates, folded into
  the call that names their terminal, whose output and exit status then outrank the agent's.
"""

from __future__ import annotations

from shellexec.normalize.changes import Appended, Replaced, Unchanged, body_change
from shellexec.normalize.fold import cancel, fold, fold_all
from shellexec.normalize.output import OutputSummary, ShellOutput, summarize
from shellexec.normalize.record import ShellRecord, shell_record
from shellexec.normalize.serialize import dump_state, load_state
from shellexec.normalize.state import ShellState, new_state
from shellexec.normalize.status import shell_result
from shellexec.normalize.text import OutputText, bound_tail, bounded_head
from shellexec.normalize.vocabulary import MAX_FIELD_BYTES, SHELL_STATUSES, TERMINAL_STATUSES

__all__ = [
    "MAX_FIELD_BYTES",
    "SHELL_STATUSES",
    "TERMINAL_STATUSES",
    "Appended",
    "OutputSummary",
    "OutputText",
    "Replaced",
    "ShellOutput",
    "ShellRecord",
    "ShellState",
    "Unchanged",
    "body_change",
    "bound_tail",
    "bounded_head",
    "cancel",
    "dump_state",
    "fold",
    "fold_all",
    "load_state",
    "new_state",
    "shell_record",
    "shell_result",
    "summarize",
]

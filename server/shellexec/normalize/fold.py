"""The fold: one ACP update at a time, into the state of one tool call.

`fold(state, update)` reads the `params.update` object of a `session/update` notification.
Only `tool_call` and `tool_call_update` say anything about a tool call; every other value,
whatever `json.loads` produced, leaves the state as it was. Within one update the fields are
read in this order, each by the module that owns its rules:

0. other agents' dialects (`dialects`): an update of Gemini, Qwen, Goose, Kimi, Vibe, Cursor
   or Copilot is read into the shapes the steps below know;
1. identity, shell detection, command, directory, title, description (`commands`): command,
   directory and description are filled once, from the first update that names them;
2. the ACP `status` (`status`);
3. live output: `_meta.terminal_output_delta`, `_meta.terminal_output`, then `content`
   (`streams`, `content`, `echo`);
4. the result: `rawOutput` (`raw_output`, `markup`) and `_meta.terminal_exit` (`exit_codes`);
5. the dialect's own live output and text exit code (`dialect_state`, `text_exits`);
6. an update without a `status` that carried output means the command is running.

A `tool_call` the bridge made from a permission request (`_meta.shellexec_permission_request`)
stops after step 2: it says what the call is, never what it printed (ADR 0131).

A v2 terminal update (`terminal_update`, `terminal_output_chunk`) is folded by
`terminal_fold`; once a call's terminal owns its output, step 3 and the texts of step 4 are
skipped (ADR 0085).

`fold` never raises and never mutates its arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from shellexec.normalize.access import JsonObject, nonblank_at, obj, payload_text
from shellexec.normalize.agents import agent_of
from shellexec.normalize.commands import (
    claude_signal,
    codex_end_event,
    codex_signal,
    command_of,
    description_of,
    model_work_dir_of,
    shell_signal,
    work_dir_of,
)
from shellexec.normalize.content import content_output
from shellexec.normalize.dialect_state import with_dialect, with_dialect_output
from shellexec.normalize.dialects import read_dialect
from shellexec.normalize.echo import presentation_line, strip_presentation
from shellexec.normalize.exit_codes import ExitRank, terminal_exit
from shellexec.normalize.raw_output import read_raw_output
from shellexec.normalize.state import ShellState, new_state
from shellexec.normalize.status import advance
from shellexec.normalize.streams import (
    append_chunk,
    apply_final,
    apply_hosted_final,
    apply_snapshot,
    apply_terminal_output,
)
from shellexec.normalize.terminal_fold import fold_terminal
from shellexec.normalize.terminal_links import CallTerminals
from shellexec.normalize.vocabulary import ShellStatus, is_terminal, parse_acp_status
from shellexec.vocabulary import (
    ACP_TERMINAL_UPDATES,
    ACP_TOOL_UPDATES,
    META_PERMISSION_REQUEST,
    STATUS_RUNNING,
)

_IDENTITY_KEYS = ("kind", "name", "rawInput", "title", "rawOutput")  # Codex's end event


def fold(state: ShellState, update: object) -> ShellState:
    """The state after one ACP `params.update` object (any JSON value; never raises).

    A v2 terminal update is folded as the update of this call's terminal (`terminal_fold`):
    the caller routes it here only once it knows the call names that terminal.
    """
    if not isinstance(update, Mapping):
        return state
    if update.get("sessionUpdate") in ACP_TERMINAL_UPDATES:
        return fold_terminal(state, update)
    if update.get("sessionUpdate") not in ACP_TOOL_UPDATES:
        return state
    # Step 0: other agents' dialects, read into the shapes the steps below know (`dialects`).
    reading = read_dialect(state.agent, update, state.tool)
    state, update = with_dialect(state, reading), reading.update
    reported = parse_acp_status(update.get("status"))
    state = _with_status(_identified(state, update), reported)
    if _is_permission_request(update):
        # A call announced by a permission request: what it is, not what it printed (its
        # content is the agent's reason or description; ADR 0131).
        return state
    # A result is final once the call has finished, unless the update itself says it is
    # still running (a reordered partial result must not replace the final one).
    final = is_terminal(state.reported_status) and (reported is None or is_terminal(reported))
    state, heard = _with_output(state, update, final)
    state = _with_exit(state, terminal_exit(update.get("_meta")), ExitRank.TERMINAL)
    state, heard_live = with_dialect_output(state, reading)
    state = _with_exit(state, reading.text_exit, ExitRank.MARKUP)
    heard = heard or heard_live
    return _with_status(state, STATUS_RUNNING) if heard and reported is None else state


def fold_all(
    updates: Iterable[object], state: ShellState | None = None, agent: str | None = None
) -> ShellState:
    """`fold` over one call's `updates` in order, from `state` or else from `new_state(agent)`.

    Terminal updates count once the call names their terminal (`terminal_links`).
    """
    current = new_state(agent) if state is None else state
    terminals = CallTerminals()
    for update in updates:
        for routed in terminals.route(current.tool_call_id, update):
            current = fold(current, routed)
    return current


def cancel(state: ShellState) -> ShellState:
    """The prompt ended: a call that is not terminal becomes `cancelled`, output kept.

    A terminal call is returned unchanged. A terminal update the agent sends later still
    folds in and settles the call to what the agent reports.
    """
    if is_terminal(state.status):
        return state
    return replace(state, cancelled_by_prompt=True)


def _identified(state: ShellState, update: JsonObject) -> ShellState:
    """`state` with what the update says about the call itself (step 1)."""
    if not _names_the_call(state, update):
        return state
    raw_input = update.get("rawInput")
    return replace(
        state,
        tool_call_id=state.tool_call_id or nonblank_at(update, "toolCallId"),
        kind=nonblank_at(update, "kind") or state.kind,
        is_shell=state.is_shell or shell_signal(update),
        command=state.command or command_of(raw_input) or command_of(codex_end_event(update)),
        # OpenCode puts the session's directory in `cwd` until the model's own arguments
        # arrive; a `workdir` among them is where the command runs.
        work_dir=model_work_dir_of(update) or state.work_dir or work_dir_of(update),
        title=nonblank_at(update, "title") or state.title,
        description=state.description or description_of(raw_input),
        terminal_chunks=state.terminal_chunks or codex_signal(update),
        terminal_snapshots=state.terminal_snapshots or claude_signal(update),
    )


def _is_permission_request(update: JsonObject) -> bool:
    return obj(update.get("_meta")).get(META_PERMISSION_REQUEST) is True


def _names_the_call(state: ShellState, update: JsonObject) -> bool:
    # Live deltas carry none of these keys: skipping them keeps a delta's cost minimal.
    return (
        state.tool_call_id is None
        or any(key in update for key in _IDENTITY_KEYS)
        or "terminal_info" in obj(update.get("_meta"))
    )


def _with_status(state: ShellState, reported: ShellStatus | None) -> ShellState:
    status = advance(state.reported_status, reported)
    return state if status == state.reported_status else replace(state, reported_status=status)


def _with_output(state: ShellState, update: JsonObject, final: bool) -> tuple[ShellState, bool]:
    """`state` after the update's output fields, and whether the update carried output."""
    if state.host_output:
        # The call's terminal owns its output: the agent's copy is not the output (ADR 0085),
        # but for Codex's combined end text.
        return _with_hosted_result(state, update, final), False
    state, live = _with_live_output(state, update, final)
    if "rawOutput" not in update:
        return state, live
    result = read_raw_output(update["rawOutput"])
    state = apply_final(state, result, final)
    state = _with_exit(state, result.exit_code, result.exit_rank)
    return state, live or result.stdout is not None or result.stderr is not None


def _with_hosted_result(state: ShellState, update: JsonObject, final: bool) -> ShellState:
    if "rawOutput" not in update:
        return state
    result = read_raw_output(update["rawOutput"])
    state = apply_hosted_final(state, result, final)
    return _with_exit(state, result.exit_code, result.exit_rank)


def _with_live_output(state: ShellState, update: JsonObject,
                      final: bool) -> tuple[ShellState, bool]:
    """`state` after the update's live output (step 3), and whether there was any; `final`
    when the call has finished (its cumulative text is then its final output)."""
    meta = obj(update.get("_meta"))
    heard = False
    delta = payload_text(meta.get("terminal_output_delta"))
    if delta is not None:
        state, heard = append_chunk(state, delta), True
    data = payload_text(meta.get("terminal_output"))
    if data is not None:
        state, heard = apply_terminal_output(state, data), True
    content = update.get("content")
    # Most updates (every live delta) carry no content: they never look up the agent.
    shown = None if content is None else content_output(content, state.description,
                                                        agent_of(state.agent))
    if shown is not None:
        body = strip_presentation(shown, presentation_line(state.command, state.title))[0]
        if body:
            state, heard = apply_snapshot(state, body, final), True
    return state, heard


def _with_exit(state: ShellState, code: int | None, rank: ExitRank) -> ShellState:
    """`state` with an exit code from a source of `rank`, unless a better source spoke."""
    if code is None or rank < state.exit_rank:
        return state
    if code == state.exit_code and rank == state.exit_rank:
        return state
    return replace(state, exit_code=code, exit_rank=rank)

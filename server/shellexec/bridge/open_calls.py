"""The agent's tool calls as the bridge sees them go by: which are open, which look like
shell commands, and which terminal each one's content names.

The bridge hosts terminals for the agent (`terminals.py`), and `terminal/create` names no
tool call. A hosted terminal belongs to (ADR 0087):

1. the tool call whose `content` names its terminal id (`{"type": "terminal", ...}`);
2. else an open tool call whose command, as the record shows it, is the terminal's: the first
   one given no terminal yet, else the most recent one. Goose announces several calls before
   it runs them, and names no terminal in any;
3. else the most recent open tool call the record shows as a shell command;
4. else the most recent open tool call of any kind (it runs a terminal, so it is one).

"Open" means not reported `completed`, `failed` or `cancelled`; "recent" means first
reported last. What the record shows is the normalizer's own fold of the call's updates, so
each agent's dialect counts: Mistral Vibe's `rawInput` is JSON text, and Kimi sends its
arguments as JSON text in `content`, with no `kind`. Only what these rules read of a call's
fold state is kept (its bounded command and shell signals, never its output or other texts),
while it is open; and at most MAX_OPEN_CALLS calls are open at once: an agent that opens more,
never ending them (Kimi sends no final update for a cancelled call), has its oldest ones taken
for ended. A call or terminal id longer than the service takes is not followed (the service
refuses its updates), and at most MAX_FOLLOWED_IDS of each are remembered, the oldest
forgotten first: an agent cannot grow the bridge by naming ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final, TypeVar

from shellexec.normalize.commands import command_of
from shellexec.normalize.fold import fold
from shellexec.normalize.state import ShellState, new_state
from shellexec.normalize.terminal_updates import terminal_refs
from shellexec.normalize.text import bounded_head
from shellexec.normalize.vocabulary import is_terminal
from shellexec.rules.limits import MAX_TERMINAL_ID_CHARS, MAX_TOOL_CALL_ID_CHARS
from shellexec.vocabulary import ACP_TOOL_UPDATES

# The open calls whose fold state is kept; past it, the one reported first is taken for ended.
MAX_OPEN_CALLS: Final = 256
# The call ids and terminal ids remembered; past it, the one first seen is forgotten.
MAX_FOLLOWED_IDS: Final = 65_536
# How much of a tool's name is kept: enough to tell every shell tool's name from the rest.
_TOOL_NAME_CHARS: Final = 64

T = TypeVar("T")


class OpenCalls:
    """Follows every `session/update` the agent sends (`observe`, in arrival order).

    `agent` is the bridge's agent hint, as the service gets it (`--agent`)."""

    def __init__(self, agent: str | None = None) -> None:
        self._agent = agent
        self._terminals: dict[str, int] = {}  # every call reported -> terminals rules 2-4 gave it
        self._open: dict[str, ShellState] = {}  # in the order they were first reported
        self._named: dict[str, str] = {}  # terminal id -> the first call that named it

    def observe(self, update: object) -> None:
        if not isinstance(update, Mapping) or update.get("sessionUpdate") not in ACP_TOOL_UPDATES:
            return
        call_id = update.get("toolCallId")
        if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_TOOL_CALL_ID_CHARS:
            return
        if call_id not in self._terminals:
            _bounded_add(self._terminals, call_id, 0, MAX_FOLLOWED_IDS)
            _bounded_add(self._open, call_id, new_state(self._agent), MAX_OPEN_CALLS)
        if (state := self._open.get(call_id)) is not None:
            state = fold(state, update)
            if is_terminal(state.reported_status):
                del self._open[call_id]
            else:
                self._open[call_id] = _identity(state)
        for terminal_id in terminal_refs(update):
            if len(terminal_id) <= MAX_TERMINAL_ID_CHARS and terminal_id not in self._named:
                _bounded_add(self._named, terminal_id, call_id, MAX_FOLLOWED_IDS)

    def known(self, call_id: str) -> bool:
        """Whether the agent reported the call in any update."""
        return call_id in self._terminals

    def is_open(self, call_id: str | None) -> bool:
        """Whether the call was reported and not ended (nor taken for ended)."""
        return call_id in self._open

    def naming(self, terminal_id: str) -> str | None:
        """The call whose content named the terminal first (rule 1), if any."""
        return self._named.get(terminal_id)

    def fallback(self, line: str) -> str | None:
        """The call a terminal running `line` belongs to while no content names it (rules 2
        to 4), if any; the call is counted as given a terminal."""
        command = command_of({"command": line})
        shown = None if command is None else bounded_head(command)
        same = [call_id for call_id, state in self._open.items()
                if shown is not None and state.command == shown]
        unserved = [call_id for call_id in same if not self._terminals[call_id]]
        shells = [call_id for call_id, state in self._open.items() if state.is_shell]
        if unserved:
            chosen: str | None = unserved[0]
        else:
            candidates = same or shells or list(self._open)
            chosen = candidates[-1] if candidates else None
        if chosen is not None:
            self._terminals[chosen] += 1
        return chosen

    def moved(self, terminal_from: str | None, terminal_to: str) -> None:
        """A terminal given to `terminal_from` (None: to no call) was named by
        `terminal_to`'s content (rule 1)."""
        if terminal_from is not None and terminal_from in self._terminals:
            self._terminals[terminal_from] -= 1
        if terminal_to in self._terminals:
            self._terminals[terminal_to] += 1


def _bounded_add(table: dict[str, T], key: str, value: T, bound: int) -> None:
    """Adds `key` last, forgetting the first key when `table` holds more than `bound`."""
    table[key] = value
    if len(table) > bound:
        del table[next(iter(table))]


def _identity(state: ShellState) -> ShellState:
    """What the rules read of a call's state: its command, bounded as the record shows it, its
    shell signals, and its tool's name (no shell tool's name is longer than a few characters);
    its output and other texts are let go."""
    command = None if state.command is None else bounded_head(state.command)
    tool = None if state.tool is None else state.tool[:_TOOL_NAME_CHARS]
    return replace(state, stdout=None, stderr=None, title=None, description=None,
                   work_dir=None, kind=None, command=command, tool=tool)

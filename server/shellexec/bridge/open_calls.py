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
arguments as JSON text in `content`, with no `kind`. A call's fold state is kept while it is
open, and let go when it ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from shellexec.normalize.commands import command_of
from shellexec.normalize.fold import fold
from shellexec.normalize.state import ShellState, new_state
from shellexec.normalize.terminal_updates import terminal_refs
from shellexec.normalize.vocabulary import is_terminal
from shellexec.vocabulary import ACP_TOOL_UPDATES


@dataclass(slots=True)
class _Call:
    state: ShellState | None  # the fold's while the call is open; None once it ended
    terminals: int = 0  # hosted terminals given to it by rules 2 to 4


class OpenCalls:
    """Follows every `session/update` the agent sends (`observe`, in arrival order).

    `agent` is the bridge's agent hint, as the service gets it (`--agent`)."""

    def __init__(self, agent: str | None = None) -> None:
        self._agent = agent
        self._calls: dict[str, _Call] = {}  # in the order they were first reported
        self._named: dict[str, str] = {}  # terminal id -> the first call that named it

    def observe(self, update: object) -> None:
        if not isinstance(update, Mapping) or update.get("sessionUpdate") not in ACP_TOOL_UPDATES:
            return
        call_id = update.get("toolCallId")
        if not isinstance(call_id, str) or not call_id:
            return
        call = self._calls.setdefault(call_id, _Call(new_state(self._agent)))
        if call.state is not None:
            state = fold(call.state, update)
            call.state = None if is_terminal(state.reported_status) else state
        for terminal_id in terminal_refs(update):
            self._named.setdefault(terminal_id, call_id)

    def known(self, call_id: str) -> bool:
        """Whether the agent reported the call in any update."""
        return call_id in self._calls

    def naming(self, terminal_id: str) -> str | None:
        """The call whose content named the terminal first (rule 1), if any."""
        return self._named.get(terminal_id)

    def fallback(self, line: str) -> str | None:
        """The call a terminal running `line` belongs to while no content names it (rules 2
        to 4), if any; the call is counted as given a terminal."""
        open_calls = {call_id: call.state for call_id, call in self._calls.items()
                      if call.state is not None}
        command = command_of({"command": line})
        same = [call_id for call_id, state in open_calls.items()
                if command is not None and state.command == command]
        unserved = [call_id for call_id in same if not self._calls[call_id].terminals]
        shells = [call_id for call_id, state in open_calls.items() if state.is_shell]
        if unserved:
            chosen: str | None = unserved[0]
        else:
            candidates = same or shells or list(open_calls)
            chosen = candidates[-1] if candidates else None
        if chosen is not None:
            self._calls[chosen].terminals += 1
        return chosen

    def moved(self, terminal_from: str | None, terminal_to: str) -> None:
        """A terminal given to `terminal_from` (None: to no call) was named by
        `terminal_to`'s content (rule 1)."""
        if terminal_from is not None and terminal_from in self._calls:
            self._calls[terminal_from].terminals -= 1
        if terminal_to in self._calls:
            self._calls[terminal_to].terminals += 1

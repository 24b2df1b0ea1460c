"""Which tool call a terminal's updates belong to, for a fold over one call's updates.

A terminal update names only its terminal. It belongs to the tool call whose `content` names
that terminal (`{"type": "terminal", "terminalId": ...}`), or to the call a hosting client
names in `_meta.shellexec_tool_call_id` (ADR 0087). It may arrive before the call names its
terminal: then it is held, and folded in (in arrival order, right after the update that made
the link) once the call does. Terminal updates of terminals the call never names are not about
this call and are dropped.

The service keeps the same rule across a session's calls, with the map and the held updates
stored (`service/terminals.py`, ADR 0086); this is its one-call form, for `fold_all` and so
the Normalize route.
"""

from __future__ import annotations

from shellexec.normalize.access import nonblank_at
from shellexec.normalize.terminal_updates import link_hint, terminal_id_of, terminal_refs
from shellexec.rules.limits import MAX_HELD_TERMINAL_UPDATES

_Held = tuple[str, str | None, object]  # terminal id, hinted tool call id, the update


class CallTerminals:
    """The terminals one call's updates linked so far, and the updates waiting for a link.

    Mutable, and local to one fold over a list: `fold_all` makes a new one per call.
    """

    def __init__(self) -> None:
        self._linked: set[str] = set()
        self._held: list[_Held] = []

    def route(self, tool_call_id: str | None, update: object) -> list[object]:
        """The updates to fold now that `update` arrived, in order (maybe none).

        `tool_call_id` is the call's id as known before `update`.
        """
        terminal_id = terminal_id_of(update)
        if terminal_id is not None:
            return self._terminal_update(tool_call_id, terminal_id, update)
        call_id = tool_call_id or nonblank_at(update, "toolCallId")
        self._linked.update(terminal_refs(update))
        released = [held for held in self._held if self._belongs(held, call_id)]
        if released:
            self._held = [held for held in self._held if not self._belongs(held, call_id)]
            self._linked.update(terminal for terminal, _, _ in released)
        return [update, *(held_update for _, _, held_update in released)]

    def _belongs(self, held: _Held, call_id: str | None) -> bool:
        terminal_id, hint, _ = held
        return terminal_id in self._linked or (hint is not None and hint == call_id)

    def _terminal_update(self, tool_call_id: str | None, terminal_id: str,
                         update: object) -> list[object]:
        hint = link_hint(update)
        if terminal_id in self._linked or (hint is not None and hint == tool_call_id):
            self._linked.add(terminal_id)
            return [update]
        if len(self._held) < MAX_HELD_TERMINAL_UPDATES:
            self._held.append((terminal_id, hint, update))
        return []

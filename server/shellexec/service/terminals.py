"""ACP terminals of a session: which tool-call message each one's updates fold into.

A v2 terminal update (`terminal_update`, `terminal_output_chunk`) names only its terminal.
The service links a terminal to a tool-call message, once, and keeps the link (ADR 0086):

1. the first tool update whose `content` names the terminal (`{"type": "terminal",
   "terminalId": ...}`) links it to that call;
2. a terminal update whose `_meta.shellexec_tool_call_id` names a stored tool call of the
   session links its terminal to that call, and moves the link there if it was elsewhere
   (the bridge names the call of the terminals it hosts, ADR 0087);
3. a terminal update of a terminal not linked yet is held (stored as published) until a
   tool update names its terminal, or is the call it names; the held updates are then folded
   into that call in arrival order, in the same transaction. A session holds at most
   MAX_HELD_TERMINAL_UPDATES of them and MAX_HELD_TERMINAL_BYTES of their data: past that, the
   publish is refused (FAILED_PRECONDITION) and nothing is stored.

A later call naming a linked terminal in its content does not move the link; only the
hosting client's `_meta` does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from shellexec import normalize
from shellexec.normalize import ShellState
from shellexec.normalize.terminal_updates import (
    decode_data,
    link_hint,
    terminal_id_of,
    terminal_refs,
)
from shellexec.projection.secrets import mask_continuation, mask_json
from shellexec.rules.limits import MAX_HELD_TERMINAL_BYTES, MAX_HELD_TERMINAL_UPDATES
from shellexec.service import tool_calls
from shellexec.service.errors import FailedPreconditionError
from shellexec.service.state_cache import StateCache
from shellexec.store import Statements
from shellexec.store.models import Message
from shellexec.vocabulary import ACP_TERMINAL_OUTPUT_CHUNK


def data_bytes(update: Mapping[str, Any]) -> int:
    """How many bytes a terminal update's data decodes to (chunk or snapshot)."""
    output = update.get("output")
    value = update.get("data") if "data" in update else (
        output.get("data") if isinstance(output, Mapping) else None)
    decoded = decode_data(value)
    return 0 if decoded is None else len(decoded)


def masked_terminal_update(update: Mapping[str, Any], context: str) -> dict[str, Any]:
    """`update` with credential forms masked in its command, directory and data: the bytes
    are masked as text (bytes that are not UTF-8 stay as they are), same length."""
    masked = {key: mask_json(value) if key in ("command", "cwd") else value
              for key, value in update.items()}
    if update.get("sessionUpdate") == ACP_TERMINAL_OUTPUT_CHUNK:
        masked["data"] = _masked_data(update.get("data"), context)
    elif isinstance(update.get("output"), Mapping):
        output = dict(update["output"])
        output["data"] = _masked_data(output.get("data"), "")
        masked["output"] = output
    return masked


def _masked_data(value: object, context: str) -> object:
    decoded = decode_data(value)
    if decoded is None:
        return value
    text = decoded.decode("utf-8", "surrogateescape")
    hidden = mask_continuation(context, text)
    if hidden == text:
        return value
    return base64.b64encode(hidden.encode("utf-8", "surrogateescape")).decode("ascii")


class Terminals:
    """The terminal links and held updates of the sessions, inside a unit of work."""

    def __init__(self, statements: Statements, states: StateCache) -> None:
        self._statements = statements
        self._states = states

    def find(self, session_id: str, update: Mapping[str, Any]
             ) -> tuple[Message, ShellState, bool] | None:
        """The message a terminal update folds into, its stored state, and whether this
        update's hint just linked the terminal (rule 2); None when it must be held."""
        terminal_id = str(terminal_id_of(update))
        linked = self._statements.terminal_message(session_id, terminal_id)
        hint = link_hint(update)
        if hint is not None and (linked is None or linked[1] != hint):
            call = tool_calls.load_call(self._statements, session_id, hint, self._states)
            if call is not None:
                # The hosting client's word: it moved the terminal to the call that named it.
                if linked is not None:
                    self._statements.unlink_terminal(session_id, terminal_id)
                self._statements.link_terminal(session_id, terminal_id, int(call[0].position))
                return call[0], call[1], linked is None
        if linked is None:
            return None
        found = tool_calls.load_call(self._statements, session_id, linked[1], self._states)
        assert found is not None  # the link's message exists: the join found it
        return found[0], found[1], False

    def hold(self, session_id: str, update: Mapping[str, Any]) -> None:
        """Stores a terminal update until its terminal is linked; refused past the bounds."""
        size = data_bytes(update)
        count, held = self._statements.held_terminal_totals(session_id)
        if count >= MAX_HELD_TERMINAL_UPDATES or held + size > MAX_HELD_TERMINAL_BYTES:
            raise FailedPreconditionError(
                f"update.terminalId: the session already holds {count} updates ({held} "
                "bytes of data) of terminals no tool call names; the limits are "
                f"{MAX_HELD_TERMINAL_UPDATES} updates and {MAX_HELD_TERMINAL_BYTES} bytes: "
                "publish the tool call that names the terminal first")
        self._statements.hold_terminal_update(
            session_id, str(terminal_id_of(update)), link_hint(update),
            json.dumps(update, ensure_ascii=False, separators=(",", ":")), size)

    def unlinked_refs(self, session_id: str, update: Mapping[str, Any]) -> list[str]:
        """The terminals a tool update names that are not linked yet (rule 1)."""
        return [terminal_id for terminal_id in terminal_refs(update)
                if self._statements.terminal_message(session_id, terminal_id) is None]

    def release(self, session_id: str, state: ShellState, terminal_ids: list[str],
                new_call: str | None = None) -> tuple[ShellState, list[str]]:
        """`state` with the held updates of `terminal_ids` folded in, in arrival order, and
        (for a call just stored, `new_call`) those whose hint names it; returns the state and
        every terminal to link to the call. The released updates are no longer held."""
        held = self._statements.held_terminal_updates(session_id)
        linked = dict.fromkeys(terminal_ids)  # in order, each once
        for _, terminal_id, hinted, _ in held:
            if new_call is not None and hinted == new_call:
                linked.setdefault(terminal_id)
        for held_id, terminal_id, _, payload in held:
            if terminal_id in linked:
                state = normalize.fold(state, json.loads(payload))
                self._statements.release_held_terminal_update(held_id)
        return state, list(linked)

    def link(self, session_id: str, terminal_ids: list[str], position: int) -> None:
        for terminal_id in terminal_ids:
            self._statements.link_terminal(session_id, terminal_id, position)

"""Recently folded tool-call states, kept in memory between units of work.

The database is the source of truth: the fold state (without bodies) is a column of the
message row and the bodies are `OutputChunk` rows. `StateCache` keeps recently folded states
so a delta does not re-read the whole body; an entry is used only while its `state_version`
matches the row's, so a write by anyone else (another replica, a restart) falls back to the
database.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

from shellexec.normalize import ShellState
from shellexec.store.models import Message

# A tool call's message row and fold state, as last written.
Call = tuple[Message, ShellState]

# What an entry is counted as beyond its texts (the objects, the dictionaries).
ENTRY_OVERHEAD_BYTES = 4096


def _weight(call: Call) -> int:
    """About the memory an entry holds, in O(fields): its bodies' bytes (their counts), every
    other text of the state (a command, title, directory, description, kind or tool name may
    be megabytes)
    and of the row (its columns hold them again, bounded, and the record), and the fixed
    part. Counting the bodies alone, 3 x 256 KiB titles per call held 900 MB in a cache of
    32 MiB."""
    row, state = call
    texts = (state.command, state.title, state.work_dir, state.description, state.kind,
             state.tool, state.agent, state.tool_call_id, *getattr(row, "__data__", {}).values())
    return ENTRY_OVERHEAD_BYTES + sum(
        0 if text is None else text.byte_count for text in (state.stdout, state.stderr)
    ) + sum(sys.getsizeof(text) for text in texts if isinstance(text, str | bytes))


class StateCache:
    """A small thread-safe LRU of (row, fold state) keyed by message position, plus where
    each recent tool call's message is.

    Bounded by `max_bytes` of bodies held (so many small calls fit, and few large ones) and
    by `capacity` entries. Only units of work (on the event loop's thread) mutate cached
    rows; readers use only the immutable states.
    """

    def __init__(self, capacity: int = 1024, max_bytes: int = 32 * 1024 * 1024) -> None:
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._bytes = 0
        self._entries: OrderedDict[int, tuple[int, Call, int]] = OrderedDict()
        self._positions: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def remember(self, session_id: str, tool_call_id: str, position: int) -> None:
        """Notes where a tool call's message is (positions never change)."""
        with self._lock:
            if len(self._positions) >= 4 * self._capacity:
                self._positions.clear()
            self._positions[(session_id, tool_call_id)] = position

    def latest(self, session_id: str, tool_call_id: str) -> Call | None:
        """The last state this process wrote for a tool call, whatever the row's version now:
        the writer checks the version when it saves (`Statements.update_message`)."""
        with self._lock:
            position = self._positions.get((session_id, tool_call_id))
            entry = None if position is None else self._entries.get(position)
            return None if entry is None else entry[1]

    def get(self, position: int, state_version: int) -> Call | None:
        with self._lock:
            entry = self._entries.get(position)
            if entry is None or entry[0] != state_version:
                return None
            self._entries.move_to_end(position)
            return entry[1]

    def clear(self) -> None:
        """Forgets everything: after a failed write, cached rows may hold unsaved changes."""
        with self._lock:
            self._entries.clear()
            self._positions.clear()
            self._bytes = 0

    def put(self, position: int, state_version: int, call: Call) -> None:
        weight = _weight(call)
        with self._lock:
            replaced = self._entries.pop(position, None)
            if replaced is not None:
                self._bytes -= replaced[2]
            self._entries[position] = (state_version, call, weight)
            self._bytes += weight
            while len(self._entries) > 1 and (len(self._entries) > self._capacity
                                              or self._bytes > self._max_bytes):
                self._bytes -= self._entries.popitem(last=False)[1][2]

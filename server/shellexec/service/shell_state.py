"""Loading and persisting a tool call's normalization state inside a unit of work.

The database is the source of truth: the fold state (without bodies) is a column of the
message row and the bodies are `OutputChunk` rows. `StateCache` keeps recently folded states
in memory so a delta does not re-read the whole body; an entry is used only while its
`state_version` matches the row's, so a write by anyone else (another replica, a restart)
falls back to the database.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from shellexec import normalize
from shellexec.normalize import MAX_FIELD_BYTES, Appended, OutputText, Replaced, ShellState
from shellexec.rules.limits import MAX_STORED_TEXT_BYTES
from shellexec.store import Statements, queries
from shellexec.store.models import Message

STREAMS = ("stdout", "stderr")
# Raw chunk bytes a stream may hold before the store rewrites it as its retained text. Twice
# the bound keeps compaction amortized: it happens at most once per MAX_FIELD_BYTES appended.
COMPACT_AT_BYTES = 2 * MAX_FIELD_BYTES


# A tool call's message row and fold state, as last written.
Call = tuple[Message, ShellState]


class StateCache:
    """A small thread-safe LRU of (row, fold state) keyed by message position, plus where
    each recent tool call's message is.

    Only units of work (on the event loop's thread) mutate cached rows; readers use only the
    immutable states.
    """

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[int, tuple[int, Call]] = OrderedDict()
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

    def put(self, position: int, state_version: int, call: Call) -> None:
        with self._lock:
            self._entries[position] = (state_version, call)
            self._entries.move_to_end(position)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)


def _state_of(row: Message) -> ShellState:
    record = json.loads(row.fold_state) if row.fold_state else {}
    position = int(row.position)
    # Stored chunks may exceed the bound until compaction; load_state bounds them again.
    return normalize.load_state(record, queries.read_stream(position, "stdout"),
                                queries.read_stream(position, "stderr"))


def load(row: Message, cache: StateCache) -> ShellState:
    """The fold state of a tool-call message row (selected with every column)."""
    cached = cache.get(int(row.position), int(row.state_version))
    return cached[1] if cached is not None else _state_of(row)


def load_call(statements: Statements, session_id: str, tool_call_id: str,
              cache: StateCache) -> Call | None:
    """The row and fold state of a tool call, or None when the session has no such call.

    The hot path of every update. A call this process wrote recently comes from the cache
    without a query; `persist` then saves only if the row is still at the cached version.
    Otherwise one narrow query finds the row and its version.
    """
    latest = cache.latest(session_id, tool_call_id)
    if latest is not None:
        return latest
    found = statements.tool_message_version(session_id, tool_call_id)
    if found is None:
        return None
    cache.remember(session_id, tool_call_id, found[0])
    cached = cache.get(*found)
    if cached is not None:
        return cached
    row = queries.get_message_row(found[0])
    return row, _state_of(row)


def _stream_of(state: ShellState, stream: str) -> OutputText | None:
    text: OutputText | None = getattr(state, stream)
    return text


def _persist_stream(statements: Statements, row: Message, stream: str,
                    before: ShellState | None, after: ShellState) -> None:
    old = None if before is None else _stream_of(before, stream)
    new = _stream_of(after, stream)
    change = normalize.body_change(old, new)
    stored_column = f"{stream}_stored_bytes"
    position = int(row.position)
    if isinstance(change, Appended):
        stored = getattr(row, stored_column) + len(change.text.encode("utf-8"))
        if stored > COMPACT_AT_BYTES and new is not None:
            statements.replace_stream(position, stream, new.text)
            stored = new.byte_count
        else:
            statements.append_chunk(position, stream, change.text)
        setattr(row, stored_column, stored)
    elif isinstance(change, Replaced):
        statements.replace_stream(position, stream, change.text)
        setattr(row, stored_column, 0 if change.text is None else len(change.text.encode()))


def bounded_head(text: str) -> str:
    """At most MAX_STORED_TEXT_BYTES of UTF-8, keeping the beginning: a command, title or chat
    message reads from its start (output streams keep their end instead, see `normalize`)."""
    if len(text) * 4 <= MAX_STORED_TEXT_BYTES:  # no character is longer than 4 bytes
        return text
    data = text.encode("utf-8", "replace")
    return text if len(data) <= MAX_STORED_TEXT_BYTES else data[:MAX_STORED_TEXT_BYTES].decode(
        "utf-8", "ignore")


def apply_view(row: Message, state: ShellState) -> None:
    """Copies the state's browser-facing summary into the row's columns.

    Uses the state's O(1) accessors: `normalize.view` would join the output bodies.
    """
    summary = state.summary()
    row.is_shell = state.is_shell
    row.type = "tool_execute" if state.is_shell else "tool_call"
    row.status = state.status
    row.title = bounded_head(state.title or "")
    row.command = bounded_head(state.command or "")
    row.work_dir = bounded_head(state.cwd or "")
    row.content = row.command or row.title
    row.exit_code = summary.exit_code
    row.truncated = summary.truncated
    row.has_output = summary.has_output
    row.stdout_bytes = summary.stdout_bytes
    row.stderr_bytes = summary.stderr_bytes
    row.fold_state = json.dumps(normalize.dump_state(state), separators=(",", ":"))


SAVED_COLUMNS = (
    "is_shell", "type", "status", "title", "command", "work_dir", "content", "exit_code",
    "truncated", "has_output", "stdout_bytes", "stderr_bytes", "fold_state",
    "stdout_stored_bytes", "stderr_stored_bytes", "updated_at",
)


def persist(statements: Statements, row: Message, before: ShellState | None,
            after: ShellState, now: int, cache: StateCache) -> None:
    """Writes `after` for a row already inserted; `before` is what the row held.

    Only the columns that changed are written (a delta usually changes five or six), and the
    row's state version is bumped so other writers' caches notice.
    """
    old = {column: getattr(row, column) for column in SAVED_COLUMNS}
    for stream in STREAMS:
        _persist_stream(statements, row, stream, before, after)
    apply_view(row, after)
    row.updated_at = now
    expected = int(row.state_version)
    row.state_version = expected + 1
    changed = {c: getattr(row, c) for c in SAVED_COLUMNS if getattr(row, c) != old[c]}
    statements.update_message(int(row.position),
                              {**changed, "state_version": row.state_version}, expected)
    cache.put(int(row.position), int(row.state_version), (row, after))

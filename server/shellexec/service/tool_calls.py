"""A tool call's message row and fold state inside a unit of work: load, insert, save.

The fold state (without bodies) is a column of the row and the bodies are `OutputChunk` rows
(ADR 0019); a recent call comes from the `StateCache` instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from shellexec import normalize
from shellexec.normalize import Appended, OutputText, Replaced, ShellState
from shellexec.projection import state_columns, state_record
from shellexec.service.state_cache import Call, StateCache
from shellexec.store import Statements, queries
from shellexec.store.compaction import KEEP_BYTES, needs_compaction
from shellexec.store.models import Message
from shellexec.vocabulary import RESULT_FAILURE, as_shell_status

STREAMS = ("stdout", "stderr")


def _counts(is_shell: bool, status: str, exit_code: int | None) -> tuple[int, int]:
    """What a row adds to its session's (commands, failures) counts."""
    if not is_shell:
        return 0, 0
    failed = normalize.shell_result(as_shell_status(status), exit_code) == RESULT_FAILURE
    return 1, int(failed)


def _recount(statements: Statements, session_id: str, before: tuple[int, int],
             after: tuple[int, int]) -> None:
    commands, failures = after[0] - before[0], after[1] - before[1]
    if commands or failures:
        statements.count_commands(session_id, commands, failures)


def _state_of(row: Message) -> ShellState:
    record = state_record(row)
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
    without a query; `save` then writes only if the row is still at the cached version.
    Otherwise one narrow query finds the row and its version: also where other replicas
    write too and one of them changed the session since this one did (the cache then serves
    the fold state only while the row's version matches).
    """
    trusted = statements.trusts_memory(session_id)
    latest = cache.latest(session_id, tool_call_id) if trusted else None
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


def _save_stream(statements: Statements, row: Message, stream: str, before: ShellState,
                 after: ShellState) -> int:
    """Writes the stream's change; returns the bytes its chunk rows hold now."""
    change = normalize.body_change(_stream_of(before, stream), _stream_of(after, stream))
    position = int(row.position)
    stored: int = getattr(row, f"{stream}_stored_bytes")
    if isinstance(change, Appended):
        stored += statements.append_chunk(position, stream, change.text)
        if needs_compaction(stored):
            stored = statements.drop_chunks_before(position, stream, KEEP_BYTES)
        new = _stream_of(after, stream)
        if needs_compaction(stored) and new is not None:  # one chunk past the threshold
            statements.replace_stream(position, stream, new.text)
            return new.byte_count
        return stored
    if isinstance(change, Replaced):
        return statements.replace_stream(position, stream, change.text)
    return stored


def insert(statements: Statements, identity: Mapping[str, object], state: ShellState,
           now: int, cache: StateCache) -> Message:
    """Inserts the message row of a new tool call, with every column `state` gives it, and
    its output chunks. `identity` names the row (id, session, task, turn, author, call)."""
    streams = {stream: _stream_of(state, stream) for stream in STREAMS}
    row = statements.insert_message({
        **identity, **state_columns(state),
        **{f"{stream}_stored_bytes": 0 if text is None else text.byte_count
           for stream, text in streams.items()},
        "state_version": 1, "created_at": now, "updated_at": now})
    position = int(row.position)
    for stream, text in streams.items():
        if text is not None:  # an empty chunk records "reported but empty"
            statements.append_chunk(position, stream, text.text)
    cache.remember(str(identity["session"]), str(identity["tool_call_id"]), position)
    cache.put(position, 1, (row, state))
    _recount(statements, str(identity["session"]), (0, 0),
             _counts(bool(row.is_shell), str(row.status), row.exit_code))
    return row


def save(statements: Statements, row: Message, before: ShellState, after: ShellState,
         now: int, cache: StateCache) -> None:
    """Writes `after` for a row already inserted; `before` is what the row held.

    Only the columns that changed are written (a delta usually changes five or six), and the
    row's state version is bumped so other writers' caches notice.
    """
    columns = state_columns(after)
    for stream in STREAMS:
        columns[f"{stream}_stored_bytes"] = _save_stream(statements, row, stream, before, after)
    columns["updated_at"] = now
    changed = {name: value for name, value in columns.items() if getattr(row, name) != value}
    counted = _counts(bool(row.is_shell), str(row.status), row.exit_code)
    expected = int(row.state_version)
    changed["state_version"] = expected + 1
    statements.update_message(int(row.position), changed, expected)
    for name, value in changed.items():
        setattr(row, name, value)
    cache.put(int(row.position), expected + 1, (row, after))
    _recount(statements, str(row.session_id), counted,
             _counts(bool(row.is_shell), str(row.status), row.exit_code))

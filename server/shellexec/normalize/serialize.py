"""Saving a state without its output bodies, and restoring it exactly.

`dump_state` gives a JSON-ready record of everything in a `ShellState` except the two output
texts, which the store keeps apart. `load_state(record, stdout, stderr)` rebuilds the state
from that record and the stored texts, so that folding resumes exactly where it stopped:
for any split of a sequence, folding the second part into the restored state gives the same
record as folding the whole sequence.

`load_state` trusts nothing: a missing key, a value of the wrong type or an unknown word
takes the default of a new state, and a body is bounded again. A stream exists exactly when
its body is given (`""` is an empty stream, None no stream). A key added in a later version
(`stdout.fallback`) defaults to how earlier versions behaved, and a renamed key (`work_dir`,
once `cwd`) is also read under its old name, so their records still load.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypeVar

from shellexec.normalize.access import obj
from shellexec.normalize.exit_codes import ExitRank, parse_exit_code
from shellexec.normalize.state import ECHO_PHASES, LIVE_SOURCES, ShellState, new_state
from shellexec.normalize.text import OutputText, valid_text
from shellexec.normalize.vocabulary import SHELL_STATUSES

RECORD_VERSION: Final = 1
# Keys of a record that once had another name, which `load_state` still reads: a record that
# has the old key holds that value itself (whoever completes a record must not add the new).
RENAMED_KEYS: Final[Mapping[str, str]] = {"work_dir": "cwd"}

_Word = TypeVar("_Word", bound=str)


def dump_state(state: ShellState) -> dict[str, object]:
    """The record of `state` without its output texts (JSON-serializable).

    A key whose value is what `load_state` gives a missing key is left out: the record is
    stored in every tool call's row, and a short row keeps the rows a commit writes few
    (ADR 0113)."""
    return {key: value for key, value in _full_record(state).items()
            if key not in _LOADED_WHEN_MISSING or value != _LOADED_WHEN_MISSING[key]}


def _full_record(state: ShellState) -> dict[str, object]:
    record: dict[str, object] = {
        "version": RECORD_VERSION,
        "agent": state.agent,
        "tool_call_id": state.tool_call_id,
        "kind": state.kind,
        "tool": state.tool,
        "is_shell": state.is_shell,
        "command": state.command,
        "work_dir": state.work_dir,
        "title": state.title,
        "description": state.description,
        "reported_status": state.reported_status,
        "cancelled_by_prompt": state.cancelled_by_prompt,
        "exit_code": state.exit_code,
        "stdout": _dump_stream(state.stdout, state.stdout_final, state.stdout_fallback,
                               state.stdout_authoritative),
        "stderr": _dump_stream(state.stderr, state.stderr_final),
        "live_source": state.live_source,
        "echo": state.echo,
        "terminal_chunks": state.terminal_chunks,
        "terminal_snapshots": state.terminal_snapshots,
        "host": _dump_host(state),
    }
    if state.exit_code is not None or state.host_signal is not None:
        record["exit_rank"] = int(state.exit_rank)  # read only when an exit was seen
    return record


def _dump_host(state: ShellState) -> dict[str, object] | None:
    if not state.host_output and state.host_signal is None:
        return None
    host: dict[str, object] = {"output": state.host_output,
                               "partial": state.host_pending.hex(), "signal": state.host_signal}
    if state.host_client:  # left out otherwise: a short row (ADR 0113)
        host["client"] = True
    return host


def _dump_stream(
    stream: OutputText | None, final: bool, fallback: bool = False, authoritative: bool = False
) -> dict[str, object] | None:
    if stream is None:
        return None
    meta = {"truncated": stream.truncated, "total_bytes": stream.total_bytes, "final": final,
            "fallback": fallback, "authoritative": authoritative}
    return {key: value for key, value in meta.items() if value}  # missing: False or 0


# What `load_state` gives each key of a record when the key is missing: the record of a new
# state (`load_state({})` is `new_state()`, tests/normalize/test_serialize.py), but for its
# version, which every record keeps.
_LOADED_WHEN_MISSING: Final[Mapping[str, object]] = {
    key: value for key, value in _full_record(new_state()).items() if key != "version"}


def load_state(record: Mapping[str, object], stdout: str | None, stderr: str | None) -> ShellState:
    """The state `record` (from `dump_state`) describes, with its stored output texts."""
    exit_code = parse_exit_code(_int(record, "exit_code"))
    stdout_meta, stderr_meta = obj(record.get("stdout")), obj(record.get("stderr"))
    host = obj(record.get("host"))
    signal = _text(host, "signal")
    return ShellState(
        agent=_text(record, "agent"),
        tool_call_id=_text(record, "tool_call_id"),
        kind=_text(record, "kind"),
        tool=_text(record, "tool"),
        is_shell=_flag(record, "is_shell"),
        command=_text(record, "command"),
        work_dir=_text(record, "work_dir") or _text(record, RENAMED_KEYS["work_dir"]),
        title=_text(record, "title"),
        description=_text(record, "description"),
        reported_status=_word(record, "reported_status", SHELL_STATUSES),
        cancelled_by_prompt=_flag(record, "cancelled_by_prompt"),
        exit_code=exit_code,
        exit_rank=(_exit_rank(record) if exit_code is not None or signal is not None
                   else ExitRank.NONE),
        stdout=_load_stream(stdout, stdout_meta),
        stderr=_load_stream(stderr, stderr_meta),
        stdout_final=stdout is not None and _flag(stdout_meta, "final"),
        stderr_final=stderr is not None and _flag(stderr_meta, "final"),
        stdout_fallback=stdout is not None and _flag(stdout_meta, "fallback"),
        stdout_authoritative=stdout is not None and _flag(stdout_meta, "authoritative"),
        live_source=_word(record, "live_source", LIVE_SOURCES),
        echo=_word(record, "echo", ECHO_PHASES),
        terminal_chunks=_flag(record, "terminal_chunks"),
        terminal_snapshots=_flag(record, "terminal_snapshots"),
        host_output=_flag(host, "output"),
        host_client=_flag(host, "client"),
        host_pending=_pending(host),
        host_signal=signal,
    )


def _pending(host: Mapping[str, object]) -> bytes:
    """At most 3 bytes: an incomplete UTF-8 sequence never needs more."""
    value = host.get("partial")
    if not isinstance(value, str) or len(value) > 6:
        return b""
    try:
        return bytes.fromhex(value)
    except ValueError:
        return b""


def _load_stream(body: str | None, meta: Mapping[str, object]) -> OutputText | None:
    if body is None:
        return None
    total = _int(meta, "total_bytes")
    return OutputText.of(
        body, truncated=_flag(meta, "truncated"), total_bytes=total if total is not None else 0
    )


def _text(record: Mapping[str, object], key: str) -> str | None:
    value = record.get(key)
    return valid_text(value) if isinstance(value, str) and value else None


def _flag(record: Mapping[str, object], key: str) -> bool:
    return record.get(key) is True


def _int(record: Mapping[str, object], key: str) -> int | None:
    value = record.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _word(record: Mapping[str, object], key: str, words: tuple[_Word, ...]) -> _Word:
    """The value at `key` if it is one of `words`, else the first word (the default)."""
    value = record.get(key)
    return next((word for word in words if word == value), words[0])


def _exit_rank(record: Mapping[str, object]) -> ExitRank:
    rank = _int(record, "exit_rank")
    valid = rank is not None and ExitRank.MARKUP <= rank <= ExitRank.HOST
    return ExitRank(rank) if valid and rank is not None else ExitRank.TERMINAL

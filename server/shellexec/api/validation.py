"""Request validation: the one layer that checks each gRPC request before a use case runs.

Every check a request can fail on its own (a required field, a length, a pattern, a range, a
size, a known word) is here, with the numbers of `shellexec.rules.limits`. What passes is
handed to the use cases as plain, valid values, so they check only what needs the database: a
session, turn or message that exists, a `since_revision` within the session's revision. A
failed check raises `InvalidArgumentError` naming the field; the error interceptor turns it
into INVALID_ARGUMENT like any other use-case error.

Ids are checked before anything can echo them. A session, turn or message id the server could
not have made (see `SERVER_ID_HEX_DIGITS`), or a task id breaking the task-id rule, cannot name
anything: it raises the same `NotFoundError` an unknown id gets from the use case, so the answer
does not depend on how wrong the id is (ADR 0042). When a request holds several ids, the first
that cannot exist is the one reported.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2

from shellexec.api import convert
from shellexec.normalize import ShellOutput
from shellexec.normalize.terminal_updates import terminal_blocks
from shellexec.rules import agent_problem, task_id_problem
from shellexec.rules.limits import (
    DEFAULT_PAGE_SIZE,
    ID_CHARACTERS,
    MAX_NORMALIZE_BYTES,
    MAX_NORMALIZE_UPDATES,
    MAX_PAGE_SIZE,
    MAX_REQUEST_ID_CHARS,
    MAX_STOP_REASON_CHARS,
    MAX_SUMMARIZE_FIELD_BYTES,
    MAX_TERMINAL_DATA_BYTES,
    MAX_TERMINAL_ID_CHARS,
    MAX_TERMINAL_SIGNAL_CHARS,
    MAX_TERMINALS_PER_TOOL_UPDATE,
    MAX_TOOL_CALL_ID_CHARS,
    MAX_UPDATE_BYTES,
    MIN_NORMALIZE_UPDATES,
    MIN_REQUEST_ID_CHARS,
    MIN_SEQUENCE,
    MIN_SINCE_REVISION,
    SERVER_ID_HEX_DIGITS,
)
from shellexec.service import InvalidArgumentError, NotFoundError
from shellexec.service.errors import quoted
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.vocabulary import (
    ACP_TERMINAL_OUTPUT_CHUNK,
    ACP_TERMINAL_UPDATES,
    ACP_TOOL_UPDATES,
    MESSAGE_ID_PREFIX,
    META_TERMINAL_TOOL_CALL,
    RESOURCE_MESSAGE,
    RESOURCE_SESSION,
    RESOURCE_TASK,
    RESOURCE_TURN,
    SESSION_ID_PREFIX,
    TURN_ID_PREFIX,
    IdPrefix,
    ResourceType,
)

SORTS = ("asc", "desc")
REQUEST_ID_PATTERN = re.compile(
    f"[{ID_CHARACTERS}]{{{MIN_REQUEST_ID_CHARS},{MAX_REQUEST_ID_CHARS}}}")
_REQUEST_ID_RULE = (f"must be {MIN_REQUEST_ID_CHARS} to {MAX_REQUEST_ID_CHARS} letters, "
                    "digits, '_', '-', '.' or ':'")


def _server_id(prefix: IdPrefix) -> re.Pattern[str]:
    return re.compile(f"{re.escape(prefix)}[0-9a-f]{{{SERVER_ID_HEX_DIGITS}}}")


SESSION_ID_PATTERN = _server_id(SESSION_ID_PREFIX)
_TURN_ID = _server_id(TURN_ID_PREFIX)
_MESSAGE_ID = _server_id(MESSAGE_ID_PREFIX)
# What the use cases call what they cannot find (the same words, so the answers match).
_SESSION, _TURN, _TASK, _SHELL_MESSAGE = "session", "turn", "task", "shell message"


@dataclass(frozen=True, slots=True)
class NormalizeArgs:
    updates: tuple[Mapping[str, Any], ...]
    agent: str
    mask_secrets: bool


@dataclass(frozen=True, slots=True)
class CreateSessionArgs:
    task_id: str
    agent: str
    request_id: str


@dataclass(frozen=True, slots=True)
class StartTurnArgs:
    session_id: str
    request_id: str


@dataclass(frozen=True, slots=True)
class PublishArgs:
    session_id: str
    update: Mapping[str, Any]
    """An object with a non-empty `sessionUpdate`; tool updates also carry a `toolCallId`."""
    sequence: int | None


@dataclass(frozen=True, slots=True)
class CompleteTurnArgs:
    session_id: str
    turn_id: str
    stop_reason: str


@dataclass(frozen=True, slots=True)
class ListArgs:
    session_id: str
    size: int
    """How many messages the page may hold, 1 to MAX_PAGE_SIZE."""
    before: str
    after: str
    descending: bool


@dataclass(frozen=True, slots=True)
class ListSessionsArgs:
    size: int
    before: str
    after: str
    descending: bool


@dataclass(frozen=True, slots=True)
class ShellOutputArgs:
    session_id: str
    message_id: str


@dataclass(frozen=True, slots=True)
class WatchArgs:
    session_id: str
    since_revision: int | None
    """Not negative; None resumes from the session's latest revision."""


def _required(value: str, field: str) -> str:
    if not value:
        raise InvalidArgumentError(field, "is required")
    return value


def _at_most_chars(value: str, field: str, limit: int) -> str:
    if len(value) > limit:
        raise InvalidArgumentError(field, f"must be at most {limit} characters")
    return value


def _possible(value: str, pattern: re.Pattern[str], resource: str,
              resource_type: ResourceType) -> str:
    """`value` if it could name a `resource`; NOT_FOUND, as for an unknown one, otherwise."""
    if not pattern.fullmatch(value):
        raise NotFoundError(resource, value, resource_type)
    return value


def _session_id(value: str) -> str:
    return _possible(_required(value, "session_id"), SESSION_ID_PATTERN, _SESSION,
                     RESOURCE_SESSION)


def _cursor(value: str, field: str) -> str:
    """An optional message id to page from; the use case reports an unknown one the same way."""
    return value and _possible(value, _MESSAGE_ID, f"message ({field})", RESOURCE_MESSAGE)


def _request_id(value: str) -> str:
    if value and not REQUEST_ID_PATTERN.fullmatch(value):
        raise InvalidArgumentError("request_id", _REQUEST_ID_RULE)
    return value


def _within_update_size(value: struct_pb2.Value, field: str) -> int:
    size = int(value.ByteSize())
    if size > MAX_UPDATE_BYTES:
        raise InvalidArgumentError(field, f"is {size} bytes; the limit is {MAX_UPDATE_BYTES}")
    return size


def _within_normalize_size(request: pb.NormalizeShellExecRequest) -> None:
    """Each update within MAX_UPDATE_BYTES and all of them within MAX_NORMALIZE_BYTES,
    checked before any is converted."""
    total = 0
    for index, value in enumerate(request.updates):
        total += _within_update_size(value, f"updates[{index}]")
    if total > MAX_NORMALIZE_BYTES:
        raise InvalidArgumentError(
            "updates", f"are {total} bytes in all; the limit is {MAX_NORMALIZE_BYTES}")


def _tool_call_id(update: Mapping[str, Any]) -> None:
    value = update.get("toolCallId")
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError("update.toolCallId", "must be a non-empty string")
    _at_most_chars(value, "update.toolCallId", MAX_TOOL_CALL_ID_CHARS)


def _terminal_blocks(update: Mapping[str, Any]) -> None:
    """The terminals a tool update names: each id bounded as a terminal update's, and few."""
    named: set[str] = set()
    for index, terminal_id in terminal_blocks(update):
        _at_most_chars(terminal_id, f"update.content[{index}].terminalId",
                       MAX_TERMINAL_ID_CHARS)
        named.add(terminal_id)
        if len(named) > MAX_TERMINALS_PER_TOOL_UPDATE:
            raise InvalidArgumentError(
                "update.content",
                f"must name at most {MAX_TERMINALS_PER_TOOL_UPDATE} terminals")


# Base64 of MAX_TERMINAL_DATA_BYTES bytes is at most this long: longer is refused undecoded.
_MAX_TERMINAL_DATA_CHARS = 4 * -(-MAX_TERMINAL_DATA_BYTES // 3)
# A signed or an unsigned 32-bit value: ACP's `exitCode` is unsigned (Windows crash codes
# such as 0xC0000005 are above the signed range); the fold keeps it as the signed value.
_EXIT_CODE_RANGE = (-(2**31), 2**32 - 1)


def _optional_text(update: Mapping[str, Any], key: str, field: str) -> None:
    value = update.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidArgumentError(field, "must be a string or null")


def _terminal_data(value: object, field: str) -> None:
    """Standard, padded base64 of at most MAX_TERMINAL_DATA_BYTES bytes."""
    if not isinstance(value, str):
        raise InvalidArgumentError(field, "must be a base64 string")
    if len(value) > _MAX_TERMINAL_DATA_CHARS:
        raise InvalidArgumentError(
            field, f"must decode to at most {MAX_TERMINAL_DATA_BYTES} bytes")
    try:
        decoded = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise InvalidArgumentError(field, "must be standard base64 (A-Z a-z 0-9 + /, "
                                          "padded with =)") from None
    if len(decoded) > MAX_TERMINAL_DATA_BYTES:
        raise InvalidArgumentError(
            field, f"must decode to at most {MAX_TERMINAL_DATA_BYTES} bytes")


def _exit_status(value: object) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise InvalidArgumentError("update.exitStatus", "must be an object or null")
    code = value.get("exitCode")
    integral = isinstance(code, int | float) and not isinstance(code, bool) and float(
        code).is_integer()
    if code is not None and not (
            integral and _EXIT_CODE_RANGE[0] <= code <= _EXIT_CODE_RANGE[1]):
        raise InvalidArgumentError(
            "update.exitStatus.exitCode",
            "must be a 32-bit integer (-2147483648 to 4294967295) or null")
    signal = value.get("signal")
    if signal is not None and not (isinstance(signal, str)
                                   and 0 < len(signal) <= MAX_TERMINAL_SIGNAL_CHARS):
        raise InvalidArgumentError(
            "update.exitStatus.signal",
            f"must be a signal name of 1 to {MAX_TERMINAL_SIGNAL_CHARS} characters or null")


def _terminal_update(update: Mapping[str, Any]) -> None:
    """An ACP v2 terminal update, every field it states checked (ADR 0085)."""
    terminal_id = update.get("terminalId")
    if not isinstance(terminal_id, str) or not terminal_id.strip():
        raise InvalidArgumentError("update.terminalId", "must be a non-empty string")
    _at_most_chars(terminal_id, "update.terminalId", MAX_TERMINAL_ID_CHARS)
    meta = update.get("_meta")
    hint = meta.get(META_TERMINAL_TOOL_CALL) if isinstance(meta, Mapping) else None
    if hint is not None and not (isinstance(hint, str) and hint
                                 and len(hint) <= MAX_TOOL_CALL_ID_CHARS):
        raise InvalidArgumentError(f"update._meta.{META_TERMINAL_TOOL_CALL}",
                                   "must name a tool call (a non-empty string of at most "
                                   f"{MAX_TOOL_CALL_ID_CHARS} characters)")
    if update["sessionUpdate"] == ACP_TERMINAL_OUTPUT_CHUNK:
        _terminal_data(update.get("data"), "update.data")
        return
    _optional_text(update, "command", "update.command")
    _optional_text(update, "cwd", "update.cwd")
    output = update.get("output")
    if output is not None:
        if not isinstance(output, Mapping):
            raise InvalidArgumentError("update.output", "must be an object or null")
        _terminal_data(output.get("data"), "update.output.data")
    _exit_status(update.get("exitStatus"))


def _acp_update(value: object) -> Mapping[str, Any]:
    """The shape every published update needs; provider fields are the fold's business."""
    if not isinstance(value, Mapping):
        raise InvalidArgumentError("update", "must be a JSON object (an ACP params.update)")
    kind = value.get("sessionUpdate")
    if not isinstance(kind, str) or not kind:
        raise InvalidArgumentError("update.sessionUpdate", "must be a non-empty string")
    if kind in ACP_TOOL_UPDATES:
        _tool_call_id(value)
        _terminal_blocks(value)
    if kind in ACP_TERMINAL_UPDATES:
        _terminal_update(value)
    return value


def _agent(agent: str) -> str:
    if (problem := agent_problem(agent)) is not None:
        raise InvalidArgumentError("agent", problem)
    return agent


def normalize(request: pb.NormalizeShellExecRequest) -> NormalizeArgs:
    count = len(request.updates)
    if count < MIN_NORMALIZE_UPDATES:
        raise InvalidArgumentError("updates", "must hold at least one ACP update")
    if count > MAX_NORMALIZE_UPDATES:
        raise InvalidArgumentError("updates",
                                   f"must hold at most {MAX_NORMALIZE_UPDATES} updates")
    agent = _agent(request.agent)
    _within_normalize_size(request)
    budget = convert.ValueBudget("updates")
    updates = []
    for index, value in enumerate(request.updates):
        update = convert.python_value(value, f"updates[{index}]", budget)
        if not isinstance(update, dict):
            raise InvalidArgumentError(f"updates[{index}]", "must be a JSON object")
        updates.append(update)
    _one_tool_call(updates)
    return NormalizeArgs(tuple(updates), agent, request.mask_secrets)


def _one_tool_call(updates: list[dict[str, Any]]) -> None:
    """Refuses tool updates of more than one call: their fold would be one record mixing the
    command of one with the output of another."""
    first: tuple[int, object] | None = None
    for index, update in enumerate(updates):
        if update.get("sessionUpdate") not in ACP_TOOL_UPDATES or "toolCallId" not in update:
            continue
        call_id = update["toolCallId"]
        if first is None:
            first = index, call_id
        elif call_id != first[1]:
            raise InvalidArgumentError(
                f"updates[{index}].toolCallId",
                f"names another tool call than updates[{first[0]}] "
                f"({quoted(str(call_id))}, not {quoted(str(first[1]))}): Normalize folds the "
                "updates of one tool call")


def summarize(request: pb.SummarizeShellOutputRequest) -> ShellOutput:
    if not request.HasField("output"):
        raise InvalidArgumentError("output", "is required")
    output = convert.output_from_proto(request.output)
    for field, text in (("output.stdout", output.stdout), ("output.stderr", output.stderr)):
        if (text is not None
                and len(text.encode("utf-8", "surrogatepass")) > MAX_SUMMARIZE_FIELD_BYTES):
            raise InvalidArgumentError(field, f"must be at most {MAX_SUMMARIZE_FIELD_BYTES} bytes")
    return output


def create_session(request: pb.CreateSessionRequest) -> CreateSessionArgs:
    if (problem := task_id_problem(request.task_id)) is not None:
        raise InvalidArgumentError("task_id", problem)
    return CreateSessionArgs(request.task_id, _agent(request.agent),
                             _request_id(request.request_id))


def get_session(request: pb.GetSessionRequest) -> str:
    return _session_id(request.session_id)


def start_turn(request: pb.StartTurnRequest) -> StartTurnArgs:
    return StartTurnArgs(_session_id(request.session_id), _request_id(request.request_id))


def publish_update(request: pb.PublishUpdateRequest) -> PublishArgs:
    session_id = _session_id(request.session_id)
    if not request.HasField("update"):
        raise InvalidArgumentError("update", "is required")
    _within_update_size(request.update, "update")
    update = _acp_update(
        convert.python_value(request.update, "update", convert.ValueBudget("update")))
    sequence = request.sequence if request.HasField("sequence") else None
    if sequence is not None and sequence < MIN_SEQUENCE:
        raise InvalidArgumentError("sequence", f"must be at least {MIN_SEQUENCE} when set")
    return PublishArgs(session_id, update, sequence)


def complete_turn(request: pb.CompleteTurnRequest) -> CompleteTurnArgs:
    return CompleteTurnArgs(
        _session_id(request.session_id),
        _possible(_required(request.turn_id, "turn_id"), _TURN_ID, _TURN, RESOURCE_TURN),
        _at_most_chars(request.stop_reason, "stop_reason", MAX_STOP_REASON_CHARS))


def list_messages(request: pb.ListMessagesRequest) -> ListArgs:
    session_id = _session_id(request.session_id)
    size, descending = _page(request.limit, request.sort, request.before, request.after)
    return ListArgs(session_id, size, _cursor(request.before, "before"),
                    _cursor(request.after, "after"), descending=descending)


def list_sessions(request: pb.ListSessionsRequest) -> ListSessionsArgs:
    size, descending = _page(request.limit, request.sort, request.before, request.after)
    return ListSessionsArgs(size, _session_cursor(request.before, "before"),
                            _session_cursor(request.after, "after"), descending)


def _page(limit: int, sort: str, before: str, after: str) -> tuple[int, bool]:
    """A list's page size and direction, as ListMessages takes them."""
    if limit < 0:
        raise InvalidArgumentError("limit", "must not be negative")
    if sort and sort not in SORTS:
        raise InvalidArgumentError("sort", "must be 'asc' or 'desc'")
    if before and after:
        raise InvalidArgumentError("before", "cannot be combined with 'after'")
    return min(limit or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE), sort == "desc"


def _session_cursor(value: str, field: str) -> str:
    """An optional session id to page from; the use case reports an unknown one the same way."""
    return value and _possible(value, SESSION_ID_PATTERN, f"session ({field})", RESOURCE_SESSION)


def get_shell_output(request: pb.GetShellOutputRequest) -> ShellOutputArgs:
    session_id = _required(request.session_id, "session_id")
    message_id = _required(request.message_id, "message_id")
    # The use case answers one way for a missing, other-session or non-shell message: so here.
    if not (SESSION_ID_PATTERN.fullmatch(session_id) and _MESSAGE_ID.fullmatch(message_id)):
        raise NotFoundError(_SHELL_MESSAGE, message_id, RESOURCE_MESSAGE)
    return ShellOutputArgs(session_id, message_id)


def watch_messages(request: pb.WatchMessagesRequest) -> WatchArgs:
    session_id = _session_id(request.session_id)
    since = request.since_revision if request.HasField("since_revision") else None
    if since is not None and since < MIN_SINCE_REVISION:
        raise InvalidArgumentError("since_revision", "must not be negative")
    return WatchArgs(session_id, since)


def get_boot_state(request: pb.GetBootStateRequest) -> str:
    return _existing_task_id(request.task_id)


def _existing_task_id(value: str) -> str:
    task_id = _required(value, "task_id")
    if task_id_problem(task_id) is not None:  # no task can have this id
        raise NotFoundError(_TASK, task_id, RESOURCE_TASK)
    return task_id


def delete_session(request: pb.DeleteSessionRequest) -> str:
    return _session_id(request.session_id)


def delete_task(request: pb.DeleteTaskRequest) -> str:
    return _existing_task_id(request.task_id)

"""Conversions between the use cases' values and the generated proto messages."""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2

from shellexec.feed import FeedEvent
from shellexec.normalize import OutputSummary, ShellOutput, ShellRecord
from shellexec.projection import MessageView, TurnView
from shellexec.rules.limits import MAX_REQUEST_VALUES, MAX_UPDATE_DEPTH
from shellexec.service import InvalidArgumentError
from shellexec.service.records import SessionRecord
from shellexec.v1 import message_pb2, session_pb2, shell_exec_service_pb2, shell_output_pb2
from shellexec.vocabulary import NORMALIZED_SHELL_EXEC


def timestamp(micros: int) -> timestamp_pb2.Timestamp:
    seconds, rest = divmod(micros, 1_000_000)
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=rest * 1000)


class ValueBudget:
    """How many more JSON values a request may convert; `field` is what it bounds."""

    __slots__ = ("field", "left")

    def __init__(self, field: str, values: int = MAX_REQUEST_VALUES) -> None:
        self.field = field
        self.left = values


def python_value(value: struct_pb2.Value, field: str, budget: ValueBudget,
                 depth: int = 1) -> Any:
    """A google.protobuf.Value as the plain JSON value it stands for, within the request's
    bounds: `budget` values in all, objects and arrays at most MAX_UPDATE_DEPTH deep (`value`
    is at `depth`). Past a bound it raises InvalidArgumentError naming the field, having
    done no more work than the bound allows.

    The same result as `json_format.MessageToDict`, in about half the time (every publish
    converts its update).
    """
    budget.left -= 1
    if budget.left < 0:
        raise InvalidArgumentError(budget.field,
                                   f"must hold at most {MAX_REQUEST_VALUES} JSON values")
    kind = value.WhichOneof("kind")
    if kind == "struct_value" or kind == "list_value":
        if depth > MAX_UPDATE_DEPTH:
            raise InvalidArgumentError(
                field, f"must nest objects and arrays at most {MAX_UPDATE_DEPTH} deep")
        if kind == "struct_value":
            fields = value.struct_value.fields  # indexing beats .items(), the abc.Mapping mixin
            return {key: python_value(fields[key], field, budget, depth + 1) for key in fields}
        return [python_value(item, field, budget, depth + 1)
                for item in value.list_value.values]
    if kind in ("string_value", "number_value", "bool_value"):
        return getattr(value, kind)
    return None


def session(record: SessionRecord) -> session_pb2.Session:
    return session_pb2.Session(
        id=record.id, task_id=record.task_id, agent=record.agent, state=record.state,
        created_at=timestamp(record.created_at), updated_at=timestamp(record.updated_at),
        revision=record.revision, current_turn_id=record.current_turn_id,
        command_count=record.command_count, failure_count=record.failure_count)


def turn(record: TurnView) -> session_pb2.Turn:
    message = session_pb2.Turn(
        id=record.id, session_id=record.session_id, state=record.state,
        stop_reason=record.stop_reason, started_at=timestamp(record.started_at))
    if record.completed_at is not None:
        message.completed_at.CopyFrom(timestamp(record.completed_at))
    return message


def summary(value: OutputSummary) -> shell_output_pb2.ShellOutputSummary:
    return shell_output_pb2.ShellOutputSummary(
        exit_code=value.exit_code, truncated=value.truncated, has_output=value.has_output,
        stdout_bytes=value.stdout_bytes, stderr_bytes=value.stderr_bytes)


def output(value: ShellOutput) -> shell_output_pb2.ShellOutput:
    return shell_output_pb2.ShellOutput(
        exit_code=value.exit_code, stdout=value.stdout, stderr=value.stderr,
        truncated=value.truncated)


def output_from_proto(message: shell_output_pb2.ShellOutput) -> ShellOutput:
    return ShellOutput(
        exit_code=message.exit_code if message.HasField("exit_code") else None,
        stdout=message.stdout if message.HasField("stdout") else None,
        stderr=message.stderr if message.HasField("stderr") else None,
        truncated=message.truncated)


def _normalized(view: MessageView) -> message_pb2.NormalizedPayload | None:
    if view.shell_exec is None:
        return None
    return message_pb2.NormalizedPayload(
        kind=NORMALIZED_SHELL_EXEC,
        shell_exec=shell_output_pb2.ShellExecSummary(
            command=view.shell_exec.command, work_dir=view.shell_exec.work_dir,
            output=summary(view.shell_exec.output), result=view.shell_exec.result))


def message(view: MessageView) -> message_pb2.Message:
    return message_pb2.Message(
        id=view.id, session_id=view.session_id, task_id=view.task_id, turn_id=view.turn_id,
        author_type=view.author_type, type=view.type, content=view.content,
        created_at=timestamp(view.created_at), updated_at=timestamp(view.updated_at),
        metadata=message_pb2.MessageMetadata(status=view.status, title=view.title,
                                             normalized=_normalized(view)))


def feed_event(event: FeedEvent) -> shell_exec_service_pb2.WatchMessagesResponse:
    response = shell_exec_service_pb2.WatchMessagesResponse(
        type=event.type, revision=event.revision)
    if event.message is not None:
        response.message.CopyFrom(message(event.message))
    if event.turn is not None:
        response.turn.CopyFrom(turn(event.turn))
    return response


def normalized(record: ShellRecord, output_summary: OutputSummary
               ) -> shell_exec_service_pb2.NormalizeShellExecResponse:
    return shell_exec_service_pb2.NormalizeShellExecResponse(
        shell_exec=shell_output_pb2.ShellExecSummary(
            command=record.command or "", work_dir=record.work_dir or "",
            output=summary(output_summary), result=record.result),
        output=output(record.output), status=record.status, result=record.result,
        is_shell=record.is_shell, title=record.title or "")

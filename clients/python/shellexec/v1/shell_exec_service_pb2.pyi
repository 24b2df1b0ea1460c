import datetime

from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from shellexec.v1 import message_pb2 as _message_pb2
from shellexec.v1 import session_pb2 as _session_pb2
from shellexec.v1 import shell_output_pb2 as _shell_output_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NormalizeShellExecRequest(_message.Message):
    __slots__ = ("updates", "agent", "mask_secrets")
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    MASK_SECRETS_FIELD_NUMBER: _ClassVar[int]
    updates: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Value]
    agent: str
    mask_secrets: bool
    def __init__(self, updates: _Optional[_Iterable[_Union[_struct_pb2.Value, _Mapping]]] = ..., agent: _Optional[str] = ..., mask_secrets: _Optional[bool] = ...) -> None: ...

class NormalizeShellExecResponse(_message.Message):
    __slots__ = ("shell_exec", "output", "status", "result", "is_shell", "title")
    SHELL_EXEC_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    IS_SHELL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    shell_exec: _shell_output_pb2.ShellExecSummary
    output: _shell_output_pb2.ShellOutput
    status: str
    result: str
    is_shell: bool
    title: str
    def __init__(self, shell_exec: _Optional[_Union[_shell_output_pb2.ShellExecSummary, _Mapping]] = ..., output: _Optional[_Union[_shell_output_pb2.ShellOutput, _Mapping]] = ..., status: _Optional[str] = ..., result: _Optional[str] = ..., is_shell: _Optional[bool] = ..., title: _Optional[str] = ...) -> None: ...

class SummarizeShellOutputRequest(_message.Message):
    __slots__ = ("output",)
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    output: _shell_output_pb2.ShellOutput
    def __init__(self, output: _Optional[_Union[_shell_output_pb2.ShellOutput, _Mapping]] = ...) -> None: ...

class SummarizeShellOutputResponse(_message.Message):
    __slots__ = ("summary",)
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summary: _shell_output_pb2.ShellOutputSummary
    def __init__(self, summary: _Optional[_Union[_shell_output_pb2.ShellOutputSummary, _Mapping]] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("task_id", "agent", "request_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    agent: str
    request_id: str
    def __init__(self, task_id: _Optional[str] = ..., agent: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.Session
    def __init__(self, session: _Optional[_Union[_session_pb2.Session, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.Session
    def __init__(self, session: _Optional[_Union[_session_pb2.Session, _Mapping]] = ...) -> None: ...

class StartTurnRequest(_message.Message):
    __slots__ = ("session_id", "request_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class StartTurnResponse(_message.Message):
    __slots__ = ("turn",)
    TURN_FIELD_NUMBER: _ClassVar[int]
    turn: _session_pb2.Turn
    def __init__(self, turn: _Optional[_Union[_session_pb2.Turn, _Mapping]] = ...) -> None: ...

class PublishUpdateRequest(_message.Message):
    __slots__ = ("session_id", "update", "sequence")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    update: _struct_pb2.Value
    sequence: int
    def __init__(self, session_id: _Optional[str] = ..., update: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., sequence: _Optional[int] = ...) -> None: ...

class PublishUpdateResponse(_message.Message):
    __slots__ = ("message", "duplicate")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    message: _message_pb2.Message
    duplicate: bool
    def __init__(self, message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class CompleteTurnRequest(_message.Message):
    __slots__ = ("session_id", "turn_id", "stop_reason")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    turn_id: str
    stop_reason: str
    def __init__(self, session_id: _Optional[str] = ..., turn_id: _Optional[str] = ..., stop_reason: _Optional[str] = ...) -> None: ...

class CompleteTurnResponse(_message.Message):
    __slots__ = ("turn", "cancelled_message_ids")
    TURN_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    turn: _session_pb2.Turn
    cancelled_message_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, turn: _Optional[_Union[_session_pb2.Turn, _Mapping]] = ..., cancelled_message_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("limit", "before", "after", "sort")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    SORT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    before: str
    after: str
    sort: str
    def __init__(self, limit: _Optional[int] = ..., before: _Optional[str] = ..., after: _Optional[str] = ..., sort: _Optional[str] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "total", "has_more", "cursor")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[_session_pb2.Session]
    total: int
    has_more: bool
    cursor: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[_session_pb2.Session, _Mapping]]] = ..., total: _Optional[int] = ..., has_more: _Optional[bool] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListMessagesRequest(_message.Message):
    __slots__ = ("session_id", "limit", "before", "after", "sort")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    SORT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    limit: int
    before: str
    after: str
    sort: str
    def __init__(self, session_id: _Optional[str] = ..., limit: _Optional[int] = ..., before: _Optional[str] = ..., after: _Optional[str] = ..., sort: _Optional[str] = ...) -> None: ...

class ListMessagesResponse(_message.Message):
    __slots__ = ("messages", "total", "has_more", "cursor", "turns")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    total: int
    has_more: bool
    cursor: str
    turns: _containers.RepeatedCompositeFieldContainer[_session_pb2.Turn]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., total: _Optional[int] = ..., has_more: _Optional[bool] = ..., cursor: _Optional[str] = ..., turns: _Optional[_Iterable[_Union[_session_pb2.Turn, _Mapping]]] = ...) -> None: ...

class GetShellOutputRequest(_message.Message):
    __slots__ = ("session_id", "message_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    message_id: str
    def __init__(self, session_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class GetShellOutputResponse(_message.Message):
    __slots__ = ("message_id", "status", "updated_at", "output")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    status: str
    updated_at: _timestamp_pb2.Timestamp
    output: _shell_output_pb2.ShellOutput
    def __init__(self, message_id: _Optional[str] = ..., status: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., output: _Optional[_Union[_shell_output_pb2.ShellOutput, _Mapping]] = ...) -> None: ...

class WatchMessagesRequest(_message.Message):
    __slots__ = ("session_id", "since_revision")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_REVISION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    since_revision: int
    def __init__(self, session_id: _Optional[str] = ..., since_revision: _Optional[int] = ...) -> None: ...

class WatchMessagesResponse(_message.Message):
    __slots__ = ("type", "revision", "message", "turn")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    type: str
    revision: int
    message: _message_pb2.Message
    turn: _session_pb2.Turn
    def __init__(self, type: _Optional[str] = ..., revision: _Optional[int] = ..., message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., turn: _Optional[_Union[_session_pb2.Turn, _Mapping]] = ...) -> None: ...

class GetBootStateRequest(_message.Message):
    __slots__ = ("task_id",)
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    def __init__(self, task_id: _Optional[str] = ...) -> None: ...

class GetBootStateResponse(_message.Message):
    __slots__ = ("initial_state",)
    INITIAL_STATE_FIELD_NUMBER: _ClassVar[int]
    initial_state: BootState
    def __init__(self, initial_state: _Optional[_Union[BootState, _Mapping]] = ...) -> None: ...

class BootState(_message.Message):
    __slots__ = ("session", "messages", "task_state", "turns")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TASK_STATE_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.Session
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    task_state: str
    turns: _containers.RepeatedCompositeFieldContainer[_session_pb2.Turn]
    def __init__(self, session: _Optional[_Union[_session_pb2.Session, _Mapping]] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., task_state: _Optional[str] = ..., turns: _Optional[_Iterable[_Union[_session_pb2.Turn, _Mapping]]] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class DeleteTaskRequest(_message.Message):
    __slots__ = ("task_id",)
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    def __init__(self, task_id: _Optional[str] = ...) -> None: ...

class DeleteTaskResponse(_message.Message):
    __slots__ = ("deleted_session_ids",)
    DELETED_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    deleted_session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, deleted_session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

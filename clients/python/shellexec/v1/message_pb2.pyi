import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from shellexec.v1 import shell_output_pb2 as _shell_output_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Message(_message.Message):
    __slots__ = ("id", "session_id", "task_id", "turn_id", "author_type", "type", "content", "created_at", "updated_at", "metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_TYPE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    session_id: str
    task_id: str
    turn_id: str
    author_type: str
    type: str
    content: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    metadata: MessageMetadata
    def __init__(self, id: _Optional[str] = ..., session_id: _Optional[str] = ..., task_id: _Optional[str] = ..., turn_id: _Optional[str] = ..., author_type: _Optional[str] = ..., type: _Optional[str] = ..., content: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Union[MessageMetadata, _Mapping]] = ...) -> None: ...

class MessageMetadata(_message.Message):
    __slots__ = ("status", "title", "normalized")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    NORMALIZED_FIELD_NUMBER: _ClassVar[int]
    status: str
    title: str
    normalized: NormalizedPayload
    def __init__(self, status: _Optional[str] = ..., title: _Optional[str] = ..., normalized: _Optional[_Union[NormalizedPayload, _Mapping]] = ...) -> None: ...

class NormalizedPayload(_message.Message):
    __slots__ = ("kind", "shell_exec")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SHELL_EXEC_FIELD_NUMBER: _ClassVar[int]
    kind: str
    shell_exec: _shell_output_pb2.ShellExecSummary
    def __init__(self, kind: _Optional[str] = ..., shell_exec: _Optional[_Union[_shell_output_pb2.ShellExecSummary, _Mapping]] = ...) -> None: ...

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ShellOutput(_message.Message):
    __slots__ = ("exit_code", "stdout", "stderr", "truncated")
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    STDOUT_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    exit_code: int
    stdout: str
    stderr: str
    truncated: bool
    def __init__(self, exit_code: _Optional[int] = ..., stdout: _Optional[str] = ..., stderr: _Optional[str] = ..., truncated: _Optional[bool] = ...) -> None: ...

class ShellOutputSummary(_message.Message):
    __slots__ = ("exit_code", "truncated", "has_output", "stdout_bytes", "stderr_bytes")
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    HAS_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STDOUT_BYTES_FIELD_NUMBER: _ClassVar[int]
    STDERR_BYTES_FIELD_NUMBER: _ClassVar[int]
    exit_code: int
    truncated: bool
    has_output: bool
    stdout_bytes: int
    stderr_bytes: int
    def __init__(self, exit_code: _Optional[int] = ..., truncated: _Optional[bool] = ..., has_output: _Optional[bool] = ..., stdout_bytes: _Optional[int] = ..., stderr_bytes: _Optional[int] = ...) -> None: ...

class ShellExecSummary(_message.Message):
    __slots__ = ("command", "work_dir", "output", "result")
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    WORK_DIR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    command: str
    work_dir: str
    output: ShellOutputSummary
    result: str
    def __init__(self, command: _Optional[str] = ..., work_dir: _Optional[str] = ..., output: _Optional[_Union[ShellOutputSummary, _Mapping]] = ..., result: _Optional[str] = ...) -> None: ...

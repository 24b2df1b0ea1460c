"""The server's own check that a transcoded call's request names what its path names
(api/path_binding.py, ADR 0146): the path templates it reads, the spellings of a segment it
accepts, and what a native gRPC call with or without the transcoder's header gets."""

from __future__ import annotations

import re

import grpc
import pytest

from shellexec.api.path_binding import ORIGINAL_PATH_HEADER, path_fields
from shellexec.app.envoy import DESCRIPTOR
from shellexec.app.rest_bindings import PathTemplate, path_patterns, read_bindings
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.stack import Stack

PATTERNS = path_patterns(read_bindings(DESCRIPTOR))
COMPLETE_TURN = "/shellexec.v1.ShellExecService/CompleteTurn"
LIST_MESSAGES = "/shellexec.v1.ShellExecService/ListMessages"


def test_every_method_with_a_path_field_has_its_templates() -> None:
    assert set(PATTERNS) >= {COMPLETE_TURN, LIST_MESSAGES,
                             "/shellexec.v1.ShellExecService/DeleteTask"}
    assert len(PATTERNS[LIST_MESSAGES]) == 2  # /task-sessions/ and its /agent-sessions/ alias
    assert "/shellexec.v1.ShellExecService/CreateSession" not in PATTERNS  # binds nothing


def test_a_path_gives_the_segments_its_template_binds_without_the_query_or_the_verb() -> None:
    path = "/api/v1/task-sessions/ses_1/turns/turn_2:complete?sessionId=ses_9"
    assert path_fields(PATTERNS[COMPLETE_TURN], path) == {"session_id": "ses_1",
                                                          "turn_id": "turn_2"}
    assert path_fields(PATTERNS[LIST_MESSAGES], "/api/v1/agent-sessions/ses_3/messages") == {
        "session_id": "ses_3"}
    assert path_fields(PATTERNS[COMPLETE_TURN], "/api/v1/task-sessions/ses_1/turns/t:cancel") \
        is None


def test_a_variable_of_several_segments_is_one_field() -> None:
    template = PathTemplate.parse("/v1/{name=shelves/*/books/**}:get")
    found = re.match(template.fields_regex, "/v1/shelves/a/books/b/c:get")
    assert found is not None
    assert found.groupdict() == {"name": "shelves/a/books/b/c"}
    assert re.match(template.fields_regex, "/v1/shelves/a/books/b/c:getx") is None
    assert re.match(template.fields_regex, "/x/v1/shelves/a/books/b:get") is None


def _list_messages(target: str, session_id: str,
                   original_path: str | None) -> grpc.StatusCode:
    metadata = () if original_path is None else ((ORIGINAL_PATH_HEADER, original_path),)
    with grpc.insecure_channel(target) as channel:
        try:
            pb_grpc.ShellExecServiceStub(channel).ListMessages(
                pb.ListMessagesRequest(session_id=session_id), metadata=metadata, timeout=10)
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK


@pytest.mark.sqlite_only
def test_a_grpc_call_is_compared_with_a_path_only_when_it_carries_one(stack: Stack) -> None:
    target = stack.grpc_target
    mine, theirs = (stack.api.new_session()["id"] for _ in range(2))
    assert _list_messages(target, theirs, None) == grpc.StatusCode.OK
    assert _list_messages(target, mine, f"/api/v1/task-sessions/{mine}/messages") \
        == grpc.StatusCode.OK
    # A client that sends the transcoder's header itself only has its own call refused.
    assert _list_messages(target, theirs, f"/api/v1/task-sessions/{mine}/messages") \
        == grpc.StatusCode.INVALID_ARGUMENT
    # A path of no template of the method binds nothing to compare.
    assert _list_messages(target, theirs, "/elsewhere") == grpc.StatusCode.OK

"""Each limit of docs/api.md ("Limits") that a request can exceed, through Envoy: a value ONE
past the limit gets the documented error naming the field, and the value AT the limit is
accepted. (tests/docs/test_limits_table.py holds the numbers of `shellexec.rules.limits` equal
to the table's, so the numbers used here are the documented ones.)

Rows that bound what the service keeps rather than what a request may send are checked where
their behaviour is: the output stream bound in tests/normalize/test_text.py and
tests/service/test_spec_scenarios.py, stored text and the page weight in
tests/service/test_errors.py (huge commands), the request-id window in tests/store/test_store.py
(it needs a clock 24 hours on).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from shellexec.client import ShellExecClient
from shellexec.demo.rest import RestResponse
from shellexec.rules import limits
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.acp import codex_start
from support.stack import Stack

PLAN = "plan"  # an update type the service accepts and ignores: nothing is stored


def assert_invalid(response: RestResponse, message: str) -> None:
    """400 with exactly the documented message (it starts with the field's name)."""
    assert response.status == 400, response.body
    assert response.json()["message"] == message


def padded_to(size: int, build: Callable[[int], Any]) -> Any:
    """`build(n)` for the n that makes its protobuf encoding exactly `size` bytes."""
    padding = size
    for _ in range(8):
        built = build(padding)
        missing = size - built.ByteSize()
        if missing == 0:
            return built
        padding += missing
    raise AssertionError(f"no padding encodes to {size} bytes")


def plan_value(padding: int) -> struct_pb2.Value:
    value = struct_pb2.Value()
    json_format.ParseDict({"sessionUpdate": PLAN, "blob": "x" * padding}, value)
    return value


def update_of_size(size: int) -> Any:
    """An ACP update (a JSON object) whose protobuf Value is exactly `size` bytes."""
    return json_format.MessageToDict(padded_to(size, plan_value))


def updates_path(session: dict[str, Any]) -> str:
    return f"/api/v1/task-sessions/{session['id']}/updates"


# one ACP update: 4 MiB (protobuf size); larger is INVALID_ARGUMENT and nothing is stored

def test_update_one_byte_over_4_mib_is_refused_and_at_4_mib_accepted(stack: Stack) -> None:
    session = stack.api.new_session()
    over = limits.MAX_UPDATE_BYTES + 1
    response = stack.api.request("POST", updates_path(session), {"update": update_of_size(over)})
    assert_invalid(response, f"update: is {over} bytes; the limit is {limits.MAX_UPDATE_BYTES}")
    at = stack.api.request("POST", updates_path(session),
                    {"update": update_of_size(limits.MAX_UPDATE_BYTES)})
    assert at.status == 200, at.body
    assert at.json()["duplicate"] is False


def test_normalize_update_one_byte_over_4_mib_is_refused_naming_its_index(
        stack: Stack) -> None:
    over = limits.MAX_UPDATE_BYTES + 1
    response = stack.api.request("POST", "/api/v1/shell-exec:normalize",
                          {"updates": [codex_start("n", "ls"), update_of_size(over)]})
    assert_invalid(response,
                   f"updates[1]: is {over} bytes; the limit is {limits.MAX_UPDATE_BYTES}")


# a Normalize request: 1 to 1,000 updates

def test_normalize_takes_1_to_1000_updates(stack: Stack) -> None:
    path = "/api/v1/shell-exec:normalize"
    running = {"sessionUpdate": "tool_call_update", "toolCallId": "n", "status": "in_progress"}
    assert_invalid(stack.api.request("POST", path, {"updates": []}),
                   "updates: must hold at least one ACP update")
    assert stack.api.request("POST", path, {"updates": [codex_start("n", "ls")]}).status == 200
    most = [codex_start("n", "ls")] + [running] * (limits.MAX_NORMALIZE_UPDATES - 1)
    assert stack.api.request("POST", path, {"updates": most}).status == 200
    assert_invalid(stack.api.request("POST", path, {"updates": [*most, running]}),
                   f"updates: must hold at most {limits.MAX_NORMALIZE_UPDATES} updates")


# one REST body: 8 MiB (Envoy answers 413); one gRPC message 16 MiB

def body_of_size(size: int) -> bytes:
    head, tail = b'{"update": {"sessionUpdate": "plan", "blob": "', b'"}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def test_rest_body_one_byte_over_8_mib_is_413_and_at_8_mib_reaches_the_server(
        stack: Stack) -> None:
    session = stack.api.new_session()
    over = stack.api.request("POST", updates_path(session),
                      raw=body_of_size(limits.MAX_REST_BODY_BYTES + 1))
    assert over.status == 413, over.body
    at = stack.api.request("POST", updates_path(session),
                           raw=body_of_size(limits.MAX_REST_BODY_BYTES))
    # Envoy lets it through; the server refuses the update inside it as too large.
    assert at.status == 400, at.body
    assert at.json()["message"].startswith("update: is ")


def test_rest_body_whose_grpc_message_is_over_16_mib_is_413(stack: Stack) -> None:
    session = stack.api.new_session()
    # Each `1,` (2 bytes of JSON) is an 11-byte protobuf number: 4 MB of body, 22 MB of gRPC.
    count = limits.MAX_GRPC_MESSAGE_BYTES // 11 + 1
    body = b'{"update": {"sessionUpdate": "plan", "n": [' + b",".join([b"1"] * count) + b"]}}"
    assert len(body) < limits.MAX_REST_BODY_BYTES
    response = stack.api.request("POST", updates_path(session), raw=body)
    assert response.status == 413, response.body


@pytest.fixture
def grpc_through_envoy(stack: Stack) -> Iterator[pb_grpc.ShellExecServiceStub]:
    # The client side sends anything: the limit under test is the server's.
    options = [("grpc.max_send_message_length", -1)]
    with grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}", options=options) as channel:
        yield pb_grpc.ShellExecServiceStub(channel)


def publish_request_of_size(session_id: str, size: int) -> pb.PublishUpdateRequest:
    def build(padding: int) -> pb.PublishUpdateRequest:
        return pb.PublishUpdateRequest(session_id=session_id, update=plan_value(padding))

    request: pb.PublishUpdateRequest = padded_to(size, build)
    return request


def test_grpc_message_one_byte_over_16_mib_is_refused_and_at_16_mib_reaches_validation(
        stack: Stack, grpc_through_envoy: pb_grpc.ShellExecServiceStub) -> None:
    session_id = stack.api.new_session()["id"]
    over = publish_request_of_size(session_id, limits.MAX_GRPC_MESSAGE_BYTES + 1)
    with pytest.raises(grpc.RpcError) as refused:
        grpc_through_envoy.PublishUpdate(over, timeout=30)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    at = publish_request_of_size(session_id, limits.MAX_GRPC_MESSAGE_BYTES)
    with pytest.raises(grpc.RpcError) as invalid:
        grpc_through_envoy.PublishUpdate(at, timeout=30)
    assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (invalid.value.details() or "").startswith("update: is ")


# Summarize input: each text field at most 262,144 bytes

@pytest.mark.parametrize("field", ["stdout", "stderr"])
def test_summarize_field_one_byte_over_the_bound_is_refused(stack: Stack, field: str) -> None:
    path = "/api/v1/shell-exec:summarize"
    # A two-byte character last: the bound counts bytes of UTF-8, not characters.
    at = "x" * (limits.MAX_SUMMARIZE_FIELD_BYTES - 2) + "é"
    accepted = stack.api.request("POST", path, {"output": {field: at}})
    assert accepted.status == 200, accepted.body
    assert accepted.json()["summary"][f"{field}_bytes"] == limits.MAX_SUMMARIZE_FIELD_BYTES
    assert_invalid(stack.api.request("POST", path, {"output": {field: at + "x"}}),
                   f"output.{field}: must be at most {limits.MAX_SUMMARIZE_FIELD_BYTES} bytes")


# list page: default 100, larger values cut to 500, negative is INVALID_ARGUMENT
# boot state: the latest 500 messages of the task's latest session

@pytest.fixture(scope="module")
def long_session(client: ShellExecClient) -> tuple[str, str]:
    """A task whose one session holds one message more than the largest page: (task, session)."""
    task = "limits-long-session"
    session = client.create_session(task, "codex")
    for index in range(limits.MAX_PAGE_SIZE + 1):
        client.publish(session.id, {"sessionUpdate": "tool_call", "toolCallId": f"c{index}",
                                    "kind": "execute", "rawInput": {"command": f"echo {index}"}})
    return task, session.id


def page(stack: Stack, session_id: str, query: str) -> RestResponse:
    return stack.api.request("GET", f"/api/v1/task-sessions/{session_id}/messages{query}")


def test_list_page_is_100_by_default_and_cut_to_500(stack: Stack,
                                                    long_session: tuple[str, str]) -> None:
    _, session_id = long_session
    default = page(stack, session_id, "").json()
    assert (len(default["messages"]), default["has_more"]) == (limits.DEFAULT_PAGE_SIZE, True)
    for limit in (limits.MAX_PAGE_SIZE, limits.MAX_PAGE_SIZE + 1):
        cut = page(stack, session_id, f"?limit={limit}").json()
        assert (len(cut["messages"]), cut["has_more"]) == (limits.MAX_PAGE_SIZE, True)
    assert page(stack, session_id, "?limit=0").json() == default
    assert_invalid(page(stack, session_id, "?limit=-1"), "limit: must not be negative")


def test_boot_state_holds_the_latest_500_messages(stack: Stack,
                                                  long_session: tuple[str, str]) -> None:
    task, _ = long_session
    boot = stack.api.request("GET", f"/api/v1/tasks/{task}/boot-state")
    assert boot.status == 200, boot.body
    contents = [m["content"] for m in boot.json()["initial_state"]["messages"]]
    assert len(contents) == limits.BOOT_STATE_MESSAGES
    assert contents[0] == "echo 1"  # the oldest one is left out
    assert contents[-1] == f"echo {limits.MAX_PAGE_SIZE}"


# task_id: 1-128 of A-Z a-z 0-9 _ - . :; agent, stop_reason: 64 characters

def create(stack: Stack, **body: str) -> RestResponse:
    return stack.api.request("POST", "/api/v1/task-sessions", body)


def test_task_id_is_1_to_128_characters(stack: Stack) -> None:
    longest = "T" * (limits.MAX_TASK_ID_CHARS - 1) + ":"
    assert create(stack, task_id=longest).status == 200
    assert create(stack, task_id="t").status == 200
    rule = "must be 1 to 128 letters, digits, '_', '-', '.' or ':'"
    assert_invalid(create(stack, task_id=longest + "x"), f"task_id: {rule}")
    assert_invalid(create(stack, task_id=""), "task_id: is required")


def test_agent_is_at_most_64_characters(stack: Stack) -> None:
    longest = "a" * limits.MAX_AGENT_CHARS
    created = create(stack, task_id="limits-agent", agent=longest)
    assert created.status == 200, created.body
    assert created.json()["session"]["agent"] == longest
    assert_invalid(create(stack, task_id="limits-agent", agent=longest + "a"),
                   f"agent: must be at most {limits.MAX_AGENT_CHARS} characters")
    assert_invalid(stack.api.request("POST", "/api/v1/shell-exec:normalize",
                              {"updates": [codex_start("n", "ls")], "agent": longest + "a"}),
                   f"agent: must be at most {limits.MAX_AGENT_CHARS} characters")


def test_stop_reason_is_at_most_64_characters(stack: Stack) -> None:
    session = stack.api.new_session()
    turn_id = stack.api.start_turn(session["id"])
    path = f"/api/v1/task-sessions/{session['id']}/turns/{turn_id}:complete"
    longest = "r" * limits.MAX_STOP_REASON_CHARS
    assert_invalid(stack.api.request("POST", path, {"stop_reason": longest + "r"}),
                   f"stop_reason: must be at most {limits.MAX_STOP_REASON_CHARS} characters")
    turn = stack.api.complete_turn(session["id"], turn_id, stop_reason=longest)["turn"]
    assert isinstance(turn, dict)
    assert turn["stop_reason"] == longest


# toolCallId: 256 characters; sequence: at least 1

@pytest.mark.parametrize("kind", ["tool_call", "tool_call_update"])
def test_tool_call_id_is_at_most_256_characters(stack: Stack, kind: str) -> None:
    session = stack.api.new_session()
    longest = "i" * limits.MAX_TOOL_CALL_ID_CHARS
    assert_invalid(stack.api.request("POST", updates_path(session),
                              {"update": {"sessionUpdate": kind, "toolCallId": longest + "i"}}),
                   f"update.toolCallId: must be at most {limits.MAX_TOOL_CALL_ID_CHARS} "
                   "characters")
    published = stack.api.publish(session["id"], {"sessionUpdate": kind, "toolCallId": longest})
    assert published["message"]["id"].startswith("msg_")
    assert stack.api.list_messages(session["id"])["total"] == 1


# The terminals one tool update names: 64, each id 256 characters

def naming_terminals(kind: str, *terminal_ids: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "toolCallId": "c1", "kind": "execute",
            "content": [{"type": "content", "content": {"type": "text", "text": "ok"}},
                        *({"type": "terminal", "terminalId": t} for t in terminal_ids)]}


@pytest.mark.parametrize("kind", ["tool_call", "tool_call_update"])
def test_a_named_terminal_id_is_at_most_256_characters(stack: Stack, kind: str) -> None:
    """On PostgreSQL a longer id did not fit its column and failed with INTERNAL."""
    session = stack.api.new_session()
    longest = "\uffff" * limits.MAX_TERMINAL_ID_CHARS  # escaped twice as long on PostgreSQL
    for length in (limits.MAX_TERMINAL_ID_CHARS + 1, 4 * limits.MAX_TERMINAL_ID_CHARS):
        assert_invalid(
            stack.api.request("POST", updates_path(session),
                              {"update": naming_terminals(kind, "t1", "t" * length)}),
            f"update.content[2].terminalId: must be at most {limits.MAX_TERMINAL_ID_CHARS} "
            "characters")
    assert stack.api.list_messages(session["id"])["total"] == 0
    message = stack.api.publish(session["id"], naming_terminals(kind, longest))["message"]
    stack.api.publish(session["id"], {"sessionUpdate": "terminal_output_chunk",
                                      "terminalId": longest, "data": "aGkK"})
    assert stack.api.shell_output(session["id"], message["id"])["output"]["stdout"] == "hi\n"


@pytest.mark.parametrize("kind", ["tool_call", "tool_call_update"])
def test_a_tool_update_names_at_most_64_terminals(stack: Stack, kind: str) -> None:
    session = stack.api.new_session()
    most = [f"t{n}" for n in range(limits.MAX_TERMINALS_PER_TOOL_UPDATE)]
    assert_invalid(
        stack.api.request("POST", updates_path(session),
                          {"update": naming_terminals(kind, *most, *most, "one-more")}),
        f"update.content: must name at most {limits.MAX_TERMINALS_PER_TOOL_UPDATE} terminals")
    assert stack.api.list_messages(session["id"])["total"] == 0
    # Named twice, a terminal counts once; a blank id names none.
    published = stack.api.publish(
        session["id"], naming_terminals(kind, *most, *most, " ", ""))["message"]
    last = {"sessionUpdate": "terminal_output_chunk", "terminalId": most[-1], "data": "aGkK"}
    assert stack.api.publish(session["id"], last)["message"]["id"] == published["id"]


def test_sequence_is_at_least_1(stack: Stack) -> None:
    session = stack.api.new_session()
    assert_invalid(stack.api.request("POST", updates_path(session),
                              {"update": {"sessionUpdate": PLAN}, "sequence": 0}),
                   "sequence: must be at least 1 when set")
    first = stack.api.publish(session["id"], {"sessionUpdate": PLAN}, sequence=1)
    assert first["duplicate"] is False
    assert stack.api.publish(session["id"], {"sessionUpdate": PLAN}, sequence=1)["duplicate"]


# request_id: 1-64 of A-Z a-z 0-9 _ - . :

REQUEST_ID_RULE = "request_id: must be 1 to 64 letters, digits, '_', '-', '.' or ':'"


def test_create_session_request_id_is_at_most_64_characters(stack: Stack) -> None:
    longest = "q" * (limits.MAX_REQUEST_ID_CHARS - 1) + "."
    first = create(stack, task_id="limits-request-id", request_id=longest)
    assert first.status == 200, first.body
    again = create(stack, task_id="limits-request-id", request_id=longest)
    assert again.json()["session"]["id"] == first.json()["session"]["id"]
    assert_invalid(create(stack, task_id="limits-request-id", request_id=longest + "q"),
                   REQUEST_ID_RULE)
    assert_invalid(create(stack, task_id="limits-request-id", request_id="has space"),
                   REQUEST_ID_RULE)


def test_start_turn_request_id_is_at_most_64_characters(stack: Stack) -> None:
    session = stack.api.new_session()
    path = f"/api/v1/task-sessions/{session['id']}/turns"
    longest = "q" * limits.MAX_REQUEST_ID_CHARS
    assert_invalid(stack.api.request("POST", path, {"request_id": longest + "q"}), REQUEST_ID_RULE)
    started = stack.api.request("POST", path, {"request_id": longest})
    assert started.status == 200, started.body


# since_revision: 0 to the session's revision

def first_feed_event(stack: Stack, session_id: str, since: int) -> dict[str, Any]:
    url = (f"{stack.rest_url}/api/v1/task-sessions/{session_id}/messages:watch"
           f"?since_revision={since}")
    with urllib.request.urlopen(url, timeout=15) as response:
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("data:"):
                event: dict[str, Any] = json.loads(line[len("data:"):])
                return event
    raise AssertionError("the feed ended without an event")


def test_since_revision_is_0_to_the_sessions_revision(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("w", "ls"))
    path = f"/api/v1/task-sessions/{session['id']}/messages:watch"
    assert_invalid(stack.api.request("GET", f"{path}?since_revision=-1"),
                   "since_revision: must not be negative")
    assert_invalid(stack.api.request("GET", f"{path}?since_revision=2"),
                   "since_revision: is ahead of the session's latest revision 1")
    for since in (0, 1):
        opening = first_feed_event(stack, session["id"], since)
        assert (opening["type"], opening["revision"]) == ("heartbeat", since)

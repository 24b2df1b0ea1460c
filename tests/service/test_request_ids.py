"""CreateSession and StartTurn with a `request_id`: an answer lost between the server's commit
and the client makes the retry return the same session or turn, never a second one."""

from __future__ import annotations

import uuid

import grpc
import pytest

from shellexec.client import ShellExecClient
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.lossy_proxy import LossyProxy
from support.stack import Stack


def _task() -> str:
    return f"task-{uuid.uuid4().hex[:12]}"


def _request_id() -> str:
    return str(uuid.uuid4())


def test_lost_create_session_answer_retried_with_the_same_request_id_makes_one_session(
        stack: Stack) -> None:
    task, request_id = _task(), _request_id()
    with LossyProxy(stack.grpc_target, {"CreateSession": 1}) as proxy, \
            ShellExecClient(proxy.target) as client:
        with pytest.raises(grpc.RpcError) as lost:
            client.create_session(task, "codex", request_id)
        assert lost.value.code() == grpc.StatusCode.UNAVAILABLE
        [answer] = proxy.lost_answers("CreateSession")
        created = pb.CreateSessionResponse.FromString(answer).session

        retried = client.create_session(task, "codex", request_id)

        assert retried.id == created.id
        assert (retried.task_id, retried.agent) == (task, "codex")
        # The task's latest session is the first one: the retry created none after it.
        assert client.boot_state(task).session.id == created.id


def test_lost_start_turn_answer_retried_with_the_same_request_id_returns_the_same_turn(
        stack: Stack, client: ShellExecClient) -> None:
    session = client.create_session(_task(), "codex")
    request_id = _request_id()
    with LossyProxy(stack.grpc_target, {"StartTurn": 1}) as proxy, \
            ShellExecClient(proxy.target) as lossy:
        with pytest.raises(grpc.RpcError) as lost:
            lossy.start_turn(session.id, request_id)
        assert lost.value.code() == grpc.StatusCode.UNAVAILABLE
        [answer] = proxy.lost_answers("StartTurn")
        started = pb.StartTurnResponse.FromString(answer).turn

        retried = lossy.start_turn(session.id, request_id)

    assert retried.id == started.id
    assert client.get_session(session.id).current_turn_id == started.id
    with pytest.raises(grpc.RpcError) as refused:  # a new request still meets the open turn
        client.start_turn(session.id, _request_id())
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    client.complete_turn(session.id, started.id, "end_turn")
    late = client.start_turn(session.id, request_id)
    assert (late.id, late.state, late.stop_reason) == (started.id, "complete", "end_turn")
    after = client.get_session(session.id)
    assert (after.state, after.current_turn_id) == ("idle", "")


def test_without_request_id_every_call_creates_anew(client: ShellExecClient) -> None:
    task = _task()
    first, second = client.create_session(task), client.create_session(task)
    assert first.id != second.id
    turn = client.start_turn(first.id)
    client.complete_turn(first.id, turn.id)
    assert client.start_turn(first.id).id != turn.id


def test_start_turn_request_ids_are_per_session(client: ShellExecClient) -> None:
    task, request_id = _task(), _request_id()
    one, two = client.create_session(task), client.create_session(task)
    assert client.start_turn(one.id, request_id).id != client.start_turn(two.id, request_id).id


def test_request_id_reused_for_another_agent_of_the_task_is_invalid_argument(
        stack: Stack) -> None:
    body = {"task_id": _task(), "agent": "codex", "request_id": _request_id()}
    first = stack.api.request("POST", "/api/v1/task-sessions", body)
    assert first.status == 200

    reused = stack.api.request("POST", "/api/v1/task-sessions", {**body, "agent": "claude"})

    assert reused.status == 400
    assert reused.json()["message"].startswith("request_id: was already used")
    assert first.json()["session"]["id"] in reused.json()["message"]


def test_create_session_request_ids_are_per_task(stack: Stack) -> None:
    request_id = _request_id()
    bodies = [{"task_id": _task(), "agent": "codex", "request_id": request_id}
              for _ in range(2)]
    first, second = (stack.api.request("POST", "/api/v1/task-sessions", body).json()["session"]
                     for body in bodies)
    assert first["id"] != second["id"]
    assert (first["task_id"], second["task_id"]) == (bodies[0]["task_id"], bodies[1]["task_id"])
    # Each is still the answer to a retry within its own task.
    assert [stack.api.request("POST", "/api/v1/task-sessions", body).json()["session"]["id"]
            for body in bodies] == [first["id"], second["id"]]


@pytest.mark.parametrize("request_id", ["x" * 65, "has space", "é"])
def test_malformed_request_id_is_refused_naming_the_field(stack: Stack, request_id: str) -> None:
    created = stack.api.request("POST", "/api/v1/task-sessions",
                                {"task_id": _task(), "request_id": request_id})
    assert created.status == 400
    assert created.json()["message"].startswith("request_id:")

    session_id = stack.api.request("POST", "/api/v1/task-sessions",
                                   {"task_id": _task()}).json()["session"]["id"]
    started = stack.api.request("POST", f"/api/v1/task-sessions/{session_id}/turns",
                                {"request_id": request_id})
    assert started.status == 400
    assert started.json()["message"].startswith("request_id:")
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session_id}").json()["session"][
        "current_turn_id"] == ""


def test_rest_retries_with_request_id_return_the_same_session_and_turn(stack: Stack) -> None:
    body = {"task_id": _task(), "agent": "codex", "request_id": _request_id()}
    first = stack.api.request("POST", "/api/v1/task-sessions", body).json()["session"]
    again = stack.api.request("POST", "/api/v1/task-sessions", body).json()["session"]
    assert again["id"] == first["id"]

    path = f"/api/v1/task-sessions/{first['id']}"
    assert stack.api.request("GET", path).json()["session"]["current_turn_id"] == ""
    turn_body = {"request_id": _request_id()}
    turn = stack.api.request("POST", f"{path}/turns", turn_body).json()["turn"]
    assert stack.api.request("POST", f"{path}/turns", turn_body).json()["turn"]["id"] == turn["id"]
    session = stack.api.request("GET", path).json()["session"]
    assert (session["state"], session["current_turn_id"]) == ("running", turn["id"])


@pytest.mark.slow
def test_request_ids_survive_a_server_crash(own_stack: Stack) -> None:
    task, create_id, start_id = _task(), _request_id(), _request_id()
    with own_stack.client() as client:
        session = client.create_session(task, "codex", create_id)
        turn = client.start_turn(session.id, start_id)
    own_stack.kill_server()
    own_stack.start_server()

    with own_stack.client() as client:
        assert client.create_session(task, "codex", create_id).id == session.id
        assert client.start_turn(session.id, start_id).id == turn.id
        assert client.get_session(session.id).current_turn_id == turn.id

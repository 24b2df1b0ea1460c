"""Ids are checked before anything echoes them (docs/api.md, "Limits"): one the server could
not have made is NOT_FOUND exactly as an unknown one, and no error quotes more than a short
prefix of any input, over REST and over gRPC, direct and through Envoy."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from shellexec.api import validation
from shellexec.service import time_ordered_id
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.acp import codex_start
from support.rest import unique
from support.stack import Stack

UNKNOWN_SESSION, UNKNOWN_TURN, UNKNOWN_MESSAGE = (f"{prefix}_{'0' * 32}"
                                                  for prefix in ("ses", "turn", "msg"))
# Ids no server makes: wrong prefix, upper-case hex, too short, too long, huge, odd characters.
IMPOSSIBLE = ["nope", "ses_" + "A" * 32, "ses_abc", "ses_" + "0" * 33, "x" * 5000, "ses_%20"]
SHORT_MESSAGE = 200  # characters: the quoted prefix and the sentence around it


def known(stack: Stack) -> dict[str, str]:
    session_id = stack.api.new_session()["id"]
    message_id = stack.api.play(session_id, [codex_start("k1", "ls")])
    return {"session": session_id, "message": message_id}


def routes(ids: dict[str, str]) -> dict[str, Callable[[str], tuple[str, str, str]]]:
    """Route name -> (method, path) for an id in the route's one variable position, and the
    id the message names."""
    base = f"/api/v1/task-sessions/{ids['session']}"
    return {
        "GetSession": lambda x: ("GET", f"/api/v1/task-sessions/{x}", x),
        "StartTurn": lambda x: ("POST", f"/api/v1/task-sessions/{x}/turns", x),
        "PublishUpdate": lambda x: ("POST", f"/api/v1/task-sessions/{x}/updates", x),
        "ListMessages": lambda x: ("GET", f"/api/v1/task-sessions/{x}/messages", x),
        "WatchMessages": lambda x: ("GET", f"/api/v1/task-sessions/{x}/messages:watch", x),
        "CompleteTurn": lambda x: ("POST", f"{base}/turns/{x}:complete", x),
        "GetShellOutput": lambda x: ("GET", f"{base}/messages/{x}/shell-output", x),
        "ListMessages before": lambda x: ("GET", f"{base}/messages?before={x}", x),
        "ListMessages after": lambda x: ("GET", f"{base}/messages?after={x}", x),
    }


UNKNOWN = {"CompleteTurn": UNKNOWN_TURN, "GetShellOutput": UNKNOWN_MESSAGE,
           "ListMessages before": UNKNOWN_MESSAGE, "ListMessages after": UNKNOWN_MESSAGE}
BODIES = {"PublishUpdate": {"update": codex_start("u1", "ls")}, "StartTurn": {},
          "CompleteTurn": {}}


def error(stack: Stack, route: Callable[[str], tuple[str, str, str]], name: str,
          value: str) -> tuple[int, int, str]:
    method, path, shown = route(value)
    response = stack.api.request(method, path, BODIES.get(name) if method == "POST" else None)
    body = response.json()
    return response.status, body["code"], str(body["message"]).replace(repr(shown), "ID")


def test_every_id_the_server_makes_passes_the_check() -> None:
    for _ in range(50):
        assert validation.get_session(pb.GetSessionRequest(session_id=time_ordered_id("ses")))
        validation.complete_turn(pb.CompleteTurnRequest(session_id=time_ordered_id("ses"),
                                                        turn_id=time_ordered_id("turn")))
        validation.get_shell_output(pb.GetShellOutputRequest(session_id=time_ordered_id("ses"),
                                                             message_id=time_ordered_id("msg")))


@pytest.mark.parametrize("name", list(routes({"session": "s"})))
@pytest.mark.parametrize("impossible", IMPOSSIBLE, ids=lambda value: value[:12])
def test_an_impossible_id_is_not_found_exactly_as_an_unknown_one(
        stack: Stack, name: str, impossible: str) -> None:
    route = routes(known(stack))[name]
    unknown = error(stack, route, name, UNKNOWN.get(name, UNKNOWN_SESSION))
    status, code, message = error(stack, route, name, impossible)
    assert unknown[:2] == (404, 5)
    assert (status, code) == (404, 5)
    if len(impossible) <= 64 and "%" not in impossible:
        assert message == unknown[2]
    else:  # quoted as a prefix, cut
        assert len(message) < SHORT_MESSAGE
        assert message.split("'")[0] == unknown[2].split("ID")[0]


def test_an_impossible_task_id_is_not_found_exactly_as_an_unknown_one(stack: Stack) -> None:
    unknown = stack.api.request("GET", f"/api/v1/tasks/{unique('task')}/boot-state")
    impossible = stack.api.request("GET", "/api/v1/tasks/a%20b/boot-state")
    assert (unknown.status, impossible.status) == (404, 404)
    assert impossible.json()["message"] == "task 'a b' not found"
    assert unknown.json()["message"].startswith("task 'task_")


def huge_requests(session_id: str) -> dict[str, tuple[str, bytes]]:
    huge = "x" * (1024 * 1024)
    return {
        "GetSession": ("GetSession", pb.GetSessionRequest(session_id=huge).SerializeToString()),
        "PublishUpdate": ("PublishUpdate", pb.PublishUpdateRequest(
            session_id=huge).SerializeToString()),
        "CompleteTurn": ("CompleteTurn", pb.CompleteTurnRequest(
            session_id=session_id, turn_id=huge).SerializeToString()),
        "ListMessages": ("ListMessages", pb.ListMessagesRequest(
            session_id=session_id, after=huge).SerializeToString()),
        "GetShellOutput": ("GetShellOutput", pb.GetShellOutputRequest(
            session_id=session_id, message_id=huge).SerializeToString()),
        "GetBootState": ("GetBootState", pb.GetBootStateRequest(
            task_id=huge).SerializeToString()),
        "CreateSession request_id": ("CreateSession", pb.CreateSessionRequest(
            task_id="t", request_id=huge).SerializeToString()),
        "CreateSession task_id": ("CreateSession", pb.CreateSessionRequest(
            task_id=huge).SerializeToString()),
    }


@pytest.mark.parametrize("through", ["direct", "envoy"])
def test_a_1_mib_id_over_grpc_gets_a_short_error(stack: Stack, through: str) -> None:
    target = stack.grpc_target if through == "direct" else f"127.0.0.1:{stack.rest_port}"
    session_id = stack.api.new_session()["id"]
    with grpc.insecure_channel(target) as channel:
        for name, (method, body) in huge_requests(session_id).items():
            call = channel.unary_unary(f"/shellexec.v1.ShellExecService/{method}")
            with pytest.raises(grpc.RpcError) as caught:
                call(body, timeout=10)
            code, details = caught.value.code(), caught.value.details() or ""
            assert code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT), name
            assert len(details) < SHORT_MESSAGE, (name, details[:300])
        # The channel, and Envoy's connection to the server, still serve.
        get = channel.unary_unary("/shellexec.v1.ShellExecService/GetSession")
        answer = get(pb.GetSessionRequest(session_id=session_id).SerializeToString(), timeout=10)
        assert pb.GetSessionResponse.FromString(answer).session.id == session_id

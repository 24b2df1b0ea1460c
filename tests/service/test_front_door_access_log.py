"""The front door writes one JSON line per request to Envoy's stderr (a stack's envoy.log):
the requests Envoy answers itself (a refused token, an unknown path) are in no other log, and
one that reaches the server carries the request id of the server's own line. Never a token,
another header, a body or the query. `SHELLEXEC_LOG` chooses the lines, as for the server
(docs/operations.md, "Logs")."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.processes import wait_until
from support.rest import unique
from support.stack import Stack, running_stack

FIELDS = {"time", "request_id", "http_method", "path", "http_status", "grpc_status",
          "response_flags", "duration_ms", "bytes_received", "bytes_sent", "upstream_host"}
SECRET_QUERY = "cursor-secret-in-the-query"
BAD_TOKEN = "shx_made-up-secret-token"
GET_SESSION = "/shellexec.v1.ShellExecService/GetSession"
WATCH_MESSAGES = "/shellexec.v1.ShellExecService/WatchMessages"
# Bounds the wait for a line a broken front door never writes; a working one writes at once.
WAIT_SECONDS = 30


def _lines(path: Any) -> list[dict[str, Any]]:
    text = path.read_text() if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def envoy_lines(stack: Stack) -> list[dict[str, Any]]:
    return _lines(stack.workdir / "envoy.log")


def server_lines(stack: Stack) -> list[dict[str, Any]]:
    return _lines(stack.workdir / "server.log")


def the_line(read: Callable[[], list[dict[str, Any]]],
             wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The one line `wanted` picks, once it is written."""
    assert wait_until(lambda: any(wanted(line) for line in read()), WAIT_SECONDS), \
        "no such line"
    [line] = [line for line in read() if wanted(line)]
    return line


def envoy_line_of(stack: Stack, request_id: str) -> dict[str, Any]:
    return the_line(lambda: envoy_lines(stack), lambda line: line["request_id"] == request_id)


def unknown_session() -> str:
    """A session id of the server's form that names nothing: a path of this test's own."""
    return "ses_" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def errors_only(tmp_path_factory: pytest.TempPathFactory,
                new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("access-log-errors"), SHELLEXEC_AUTH="on",
                       SHELLEXEC_LOG="errors", **new_database()) as stack:
        yield stack


@pytest.mark.sqlite_only  # Envoy's log: the same whichever engine stores data
def test_a_request_envoy_refuses_itself_is_one_line_without_token_or_query(
        secured: Stack) -> None:
    path = f"/api/v1/task-sessions/{unknown_session()}"
    answer = secured.api_as(BAD_TOKEN).request("GET", f"{path}?before={SECRET_QUERY}")
    assert answer.status == 401, answer.body[:200]

    line = the_line(lambda: envoy_lines(secured), lambda line: line.get("path") == path)
    assert set(line) == FIELDS
    assert line["http_method"] == "GET"
    assert line["http_status"] == 401
    assert line["grpc_status"] is None
    assert "UAEX" in line["response_flags"]  # refused by the token check
    assert line["upstream_host"] is None  # it reached no server
    assert len(line["request_id"]) == 36  # Envoy's x-request-id
    assert line["time"].endswith("Z")
    everything = (secured.workdir / "envoy.log").read_text()
    assert SECRET_QUERY not in everything
    assert BAD_TOKEN not in everything
    # No server line has that id: the request never reached one.
    assert line["request_id"] not in (secured.workdir / "server.log").read_text()


@pytest.mark.sqlite_only
def test_a_call_the_server_answers_has_the_same_request_id_in_both_logs(
        secured: Stack) -> None:
    token = secured.create_token(unique("logged"), "admin")
    session_id = secured.api_as(token).new_session()["id"]
    path = f"/api/v1/task-sessions/{session_id}"
    assert secured.api_as(token).request("GET", f"{path}?x={SECRET_QUERY}").status == 400
    assert secured.api_as(token).session(session_id)["id"] == session_id
    with grpc.insecure_channel(f"127.0.0.1:{secured.rest_port}") as channel:
        pb_grpc.ShellExecServiceStub(channel).GetSession(
            pb.GetSessionRequest(session_id=session_id),
            metadata=(("authorization", f"Bearer {token}"),), timeout=10)

    def served() -> list[dict[str, Any]]:
        return [line for line in server_lines(secured)
                if line.get("session_id") == session_id and line["method"] == GET_SESSION]

    assert wait_until(lambda: len(served()) == 2, WAIT_SECONDS), served()
    rest, native = (envoy_line_of(secured, call["request_id"]) for call in served())
    refused = the_line(lambda: envoy_lines(secured), lambda line: (
        line["path"] == path and line["http_status"] == 400))
    assert refused["upstream_host"] is None  # the transcoder's 400: no server saw it
    # The REST call's own method and path, not the gRPC ones the transcoder made of them.
    assert (rest["http_method"], rest["path"], rest["http_status"]) == ("GET", path, 200)
    assert (native["http_method"], native["path"], native["http_status"],
            native["grpc_status"]) == ("POST", GET_SESSION, 200, "0")
    for line in (rest, native):
        assert line["upstream_host"] == secured.grpc_target
        assert line["bytes_sent"] > 0
    everything = (secured.workdir / "envoy.log").read_text()
    assert token not in everything
    assert SECRET_QUERY not in everything


@pytest.mark.sqlite_only
def test_a_clients_own_request_id_is_in_both_logs(secured: Stack) -> None:
    token = secured.create_token(unique("own_id"), "admin")
    request_id = unique("client-id")
    created = secured.api_as(token).request("POST", "/api/v1/task-sessions",
                                            {"task_id": unique("task")},
                                            headers={"x-request-id": request_id})
    assert created.status == 200, created.body[:200]

    line = envoy_line_of(secured, request_id)
    assert (line["http_method"], line["path"]) == ("POST", "/api/v1/task-sessions")
    served = the_line(lambda: server_lines(secured),
                      lambda line: line["request_id"] == request_id)
    assert served["session_id"] == created.json()["session"]["id"]


@pytest.mark.sqlite_only
def test_a_path_a_client_claims_is_not_logged(secured: Stack) -> None:
    """A client's own x-envoy-original-path (what the transcoder records of a REST call)
    is dropped on arrival: the log names the path asked for."""
    path = f"/nowhere/{uuid.uuid4().hex}"
    claimed = f"/claimed/{uuid.uuid4().hex}"
    answer = secured.api.request("GET", path, headers={"x-envoy-original-path": claimed,
                                                       "x-envoy-original-method": "PUT"})
    assert answer.status == 404

    line = the_line(lambda: envoy_lines(secured), lambda line: line.get("path") == path)
    assert line["http_method"] == "GET"
    assert claimed not in (secured.workdir / "envoy.log").read_text()


@pytest.mark.sqlite_only
def test_errors_logs_only_failed_requests(errors_only: Stack) -> None:
    token = errors_only.create_token(unique("errors"), "admin")
    api = errors_only.api_as(token)
    session_id = api.new_session()["id"]
    found = f"/api/v1/task-sessions/{session_id}"
    assert api.session(session_id)["id"] == session_id  # 200: not logged
    missing = unknown_session()
    with grpc.insecure_channel(f"127.0.0.1:{errors_only.rest_port}") as channel:
        stub = pb_grpc.ShellExecServiceStub(channel)
        auth = (("authorization", f"Bearer {token}"),)
        stub.GetSession(pb.GetSessionRequest(session_id=session_id), metadata=auth,
                        timeout=10)  # OK: not logged
        with pytest.raises(grpc.RpcError) as raised:  # NOT_FOUND in an HTTP 200: logged
            stub.GetSession(pb.GetSessionRequest(session_id=missing), metadata=auth,
                            timeout=10)
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    refused = api.request(  # a Connect stream's refusal, in an HTTP 200: logged
        "POST", WATCH_MESSAGES, raw=b"", headers={
            "content-type": "application/connect+proto", "connect-protocol-version": "1",
            "connect-content-encoding": "gzip"})
    assert refused.status == 200
    assert b"unimplemented" in refused.body
    last = f"/nowhere/{uuid.uuid4().hex}"
    assert api.request("GET", last).status == 404  # logged, after all the others

    # Envoy writes its lines in the order its requests ended: once the last is there, every
    # line of the requests before it is too.
    the_line(lambda: envoy_lines(errors_only), lambda line: line.get("path") == last)
    lines = envoy_lines(errors_only)
    assert not [line for line in lines if line["http_status"] < 400
                and line["grpc_status"] in (None, "0") and line["path"] != WATCH_MESSAGES], lines
    assert found not in [line["path"] for line in lines]
    [failed] = [line for line in lines if line["path"] == GET_SESSION]
    assert (failed["http_status"], failed["grpc_status"]) == (200, "5")
    assert [line["http_status"] for line in lines if line["path"] == WATCH_MESSAGES] == [200]
    # The server's own log holds the failed call, with the same request id.
    the_line(lambda: server_lines(errors_only), lambda line: (
        line["request_id"] == failed["request_id"] and line["status"] == "NOT_FOUND"))

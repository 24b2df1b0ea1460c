"""Bearer tokens through the real Envoy and directly over gRPC: a missing or unknown token is
401 / UNAUTHENTICATED, a token without the scope 403 / PERMISSION_DENIED, a token restricted to
some tasks sees any other task's sessions and messages exactly as missing ones (404), and the
health service and reflection stay open."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.api.auth import METHOD_SCOPES, MISSING_TOKEN, UNKNOWN_TOKEN
from shellexec.demo.rest import RestError, RestResponse
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc
from shellexec.vocabulary import ERROR_DOMAIN, REASON_TOKEN_MISSING, REASON_TOKEN_UNKNOWN

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import BIN, ROOT, Stack


@dataclass(frozen=True)
class Seeded:
    """A session of a task the restricted token may see and one of a task it may not, each
    with a finished shell command and an open turn."""

    mine: str
    mine_task: str
    other: str
    other_task: str
    other_message: str
    other_turn: str


@pytest.fixture(scope="module")
def admin(secured: Stack) -> Api:
    return secured.api_as(secured.create_token("admin", "admin"))


@pytest.fixture(scope="module")
def seeded(admin: Api) -> Seeded:
    sessions = []
    for prefix in ("repo", "secret"):
        task = unique(prefix)
        session = admin.new_session(task_id=task)["id"]
        turn = admin.start_turn(session)
        message = admin.play(session, [codex_start("c1", "env"),
                                       codex_end("c1", "AWS=planted\n", 0)])
        sessions.append((session, task, message, turn))
    (mine, mine_task, _, _), (other, other_task, other_message, other_turn) = sessions
    return Seeded(mine, mine_task, other, other_task, other_message, other_turn)


def protected_routes(seeded: Seeded) -> list[tuple[str, str, object]]:
    """(method, path, body) of every route that needs a token."""
    session = f"/api/v1/task-sessions/{seeded.mine}"
    return [
        ("POST", "/api/v1/shell-exec:normalize", {"updates": [codex_start("n", "ls")]}),
        ("POST", "/api/v1/shell-exec:summarize", {"output": {"stdout": "x"}}),
        ("POST", "/api/v1/task-sessions", {"task_id": seeded.mine_task}),
        ("GET", session, None),
        ("GET", "/api/v1/task-sessions", None),
        ("POST", f"{session}/turns", {}),
        ("POST", f"{session}/updates", {"update": codex_start("u", "ls")}),
        ("POST", f"{session}/turns/turn_x:complete", {"stop_reason": "end_turn"}),
        ("GET", f"{session}/messages", None),
        ("GET", f"{session}/messages/msg_x/shell-output", None),
        ("GET", f"/api/v1/tasks/{seeded.mine_task}/boot-state", None),
        ("DELETE", session, None),
        ("DELETE", f"/api/v1/tasks/{seeded.mine_task}", None),
    ]


def _error(response: RestResponse) -> tuple[int, str]:
    return response.status, str(response.json().get("message", ""))


def test_every_route_without_a_token_is_401_and_names_the_header(
        secured: Stack, seeded: Seeded) -> None:
    for method, path, body in protected_routes(seeded):
        status, message = _error(secured.api.request(method, path, body))
        assert status == 401, (method, path)
        assert "authorization: Bearer" in message


def test_the_feed_without_a_token_is_401(secured: Stack, seeded: Seeded) -> None:
    with pytest.raises(RestError) as refused:
        next(secured.api.watch(seeded.mine))
    assert refused.value.response is not None
    assert refused.value.response.status == 401


@pytest.mark.parametrize("header", ["Bearer shx_not-a-token", "Bearer ", "Basic dXNlcjpwdw==",
                                    "Bearer " + "x" * 300])
def test_an_unknown_or_malformed_token_is_401(secured: Stack, seeded: Seeded,
                                              header: str) -> None:
    response = secured.api.request("GET", f"/api/v1/task-sessions/{seeded.mine}",
                                   headers={"authorization": header})
    assert response.status == 401


@pytest.mark.parametrize(("method", "content_type", "body", "header", "message", "reason"), [
    ("GetSession", "application/proto", b"", None, MISSING_TOKEN, REASON_TOKEN_MISSING),
    ("GetSession", "application/proto", b"", "Bearer shx_not-a-token", UNKNOWN_TOKEN,
     REASON_TOKEN_UNKNOWN),
    ("WatchMessages", "application/connect+proto", b"\0\0\0\0\0", None, MISSING_TOKEN,
     REASON_TOKEN_MISSING),
])
def test_a_connect_call_without_a_valid_token_gets_connect_s_error(
        secured: Stack, method: str, content_type: str, body: bytes, header: str | None,
        message: str, reason: str) -> None:
    """A Connect client reads its error from Connect's JSON: the front door's 401 was plain
    text, and the client could tell only the HTTP status. Its details name the reason as an
    ErrorInfo, the value in base64 without padding (docs/api.md, "Error reasons")."""
    connection = http.client.HTTPConnection("127.0.0.1", secured.rest_port, timeout=10)
    headers = {"content-type": content_type, "connect-protocol-version": "1",
               **({"authorization": header} if header else {})}
    try:
        connection.request("POST", f"/shellexec.v1.ShellExecService/{method}", body=body,
                           headers=headers)
        response = connection.getresponse()
        answer = (response.status, response.getheader("content-type"), response.read())
    finally:
        connection.close()
    assert answer[:2] == (401, "application/json")
    info = base64.b64encode(error_details_pb2.ErrorInfo(
        reason=reason, domain=ERROR_DOMAIN).SerializeToString()).decode().rstrip("=")
    assert json.loads(answer[2]) == {
        "code": "unauthenticated", "message": message,
        "details": [{"type": "type.googleapis.com/google.rpc.ErrorInfo", "value": info}]}


def test_a_connect_call_with_a_valid_token_is_served(secured: Stack, seeded: Seeded) -> None:
    token = secured.create_token(unique("connect_reader"), "read")
    connection = http.client.HTTPConnection("127.0.0.1", secured.rest_port, timeout=10)
    try:
        connection.request("POST", "/shellexec.v1.ShellExecService/GetSession",
                           body=pb.GetSessionRequest(session_id=seeded.mine).SerializeToString(),
                           headers={"content-type": "application/proto",
                                    "connect-protocol-version": "1",
                                    "authorization": f"Bearer {token}"})
        response = connection.getresponse()
        status, body = response.status, response.read()
    finally:
        connection.close()
    assert status == 200, body
    assert pb.GetSessionResponse.FromString(body).session.id == seeded.mine


def test_a_revoked_token_is_401(secured: Stack, seeded: Seeded) -> None:
    token = secured.create_token(unique("revoked"), "read")
    reader = secured.api_as(token)
    assert reader.session(seeded.mine)["id"] == seeded.mine
    subprocess.run([BIN / "shellexec", "token", "revoke", reader_name(secured, token)],
                   cwd=ROOT, env=secured.env, check=True, capture_output=True, timeout=60)
    assert reader.request("GET", f"/api/v1/task-sessions/{seeded.mine}").status == 401


def reader_name(stack: Stack, token: str) -> str:
    """The name of the stored token whose hash is `token`'s."""
    rows = stack.sql("SELECT name FROM api_token WHERE token_hash = ?",
                     hashlib.sha256(token.encode()).hexdigest())
    assert rows
    return str(rows[0][0])


def test_a_read_token_cannot_write_and_an_ingest_token_cannot_read(
        secured: Stack, seeded: Seeded) -> None:
    reader = secured.api_as(secured.create_token(unique("reader"), "read"))
    writer = secured.api_as(secured.create_token(unique("writer"), "ingest"))
    session = f"/api/v1/task-sessions/{seeded.mine}"
    for method, path, body in [("POST", "/api/v1/task-sessions", {"task_id": "t"}),
                               ("POST", f"{session}/turns", {}),
                               ("POST", f"{session}/updates", {"update": codex_start("r", "ls")})]:
        status, message = _error(reader.request(method, path, body))
        assert status == 403, path
        assert message.endswith("needs the scope ingest"), path
    for path in (f"{session}/messages", f"/api/v1/tasks/{seeded.mine_task}/boot-state"):
        assert writer.request("GET", path).status == 403
    # Deleting needs `admin`: neither a reader nor a writer deletes.
    for api in (reader, writer):
        for path in (session, f"/api/v1/tasks/{seeded.mine_task}"):
            status, message = _error(api.request("DELETE", path))
            assert (status, message.endswith("needs the scope admin")) == (403, True), path
    # A writer reads its own session back; both run the stateless calls.
    assert writer.session(seeded.mine)["id"] == seeded.mine
    assert reader.session(seeded.mine)["id"] == seeded.mine
    for api in (reader, writer):
        normalized = api.call("POST", "/api/v1/shell-exec:normalize",
                              {"updates": [codex_start("n", "ls")]})
        assert normalized["shell_exec"]["command"] == "ls"


def test_an_ingest_token_does_not_read_messages_through_publish_answers(
        secured: Stack, seeded: Seeded, admin: Api) -> None:
    """A publish that changes nothing answered with the whole message: a write-only token
    read any session it could name that way."""
    writer = secured.api_as(secured.create_token(unique("writer"), "ingest"))
    path = f"/api/v1/task-sessions/{seeded.mine}/updates"
    touch = {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "c1"}, "sequence": 9}
    assert writer.call("POST", path, touch) == {"duplicate": False}
    assert writer.call("POST", path, touch) == {"duplicate": True}
    chat = {"update": {"sessionUpdate": "agent_message_chunk",
                       "content": {"type": "text", "text": "done"}}}
    assert "message" not in writer.call("POST", path, chat)
    answer = admin.call("POST", path, {**touch, "sequence": 10})
    assert answer["message"]["content"] == "env"


def test_a_restricted_token_sees_other_tasks_as_missing(secured: Stack, seeded: Seeded) -> None:
    restricted = secured.api_as(
        secured.create_token(unique("repo-only"), "read", "ingest", tasks="repo_*"))
    other = f"/api/v1/task-sessions/{seeded.other}"
    missing = "/api/v1/task-sessions/ses_00000000000000000000000000000000"
    routes = [
        ("GET", "", None),
        ("GET", "/messages", None),
        ("GET", f"/messages/{seeded.other_message}/shell-output", None),
        ("POST", "/updates", {"update": codex_start("x", "ls")}),
        ("POST", "/turns", {}),
        ("POST", f"/turns/{seeded.other_turn}:complete", {"stop_reason": "end_turn"}),
    ]
    for method, suffix, body in routes:
        hidden = restricted.request(method, other + suffix, body)
        absent = restricted.request(method, missing + suffix, body)
        assert hidden.status == absent.status == 404, suffix
        unknown_id = missing.rsplit("/", 1)[1]
        assert hidden.json()["message"].replace(seeded.other, unknown_id) == (
            absent.json()["message"]), suffix
    with pytest.raises(RestError) as refused:
        next(restricted.watch(seeded.other))
    assert refused.value.response is not None
    assert refused.value.response.status == 404
    boot = restricted.request("GET", f"/api/v1/tasks/{seeded.other_task}/boot-state")
    assert boot.status == 404
    # Its own task works, with the same token.
    assert restricted.session(seeded.mine)["task_id"] == seeded.mine_task
    assert restricted.call("GET", f"/api/v1/tasks/{seeded.mine_task}/boot-state")[
        "initial_state"]["session"]["id"] == seeded.mine
    created = restricted.create_session(unique("repo"))
    assert created["task_id"].startswith("repo_")


def test_a_restricted_token_cannot_create_sessions_of_other_tasks(secured: Stack) -> None:
    restricted = secured.api_as(secured.create_token(unique("narrow"), "ingest",
                                                     tasks="repo_*"))
    response = restricted.request("POST", "/api/v1/task-sessions", {"task_id": "elsewhere"})
    assert response.status == 403


def test_a_request_id_another_task_used_does_not_refuse_a_create(secured: Stack) -> None:
    # Request ids are scoped by task (ADR 0118): one tenant's id neither refuses another's
    # create nor tells it that the id was used.
    alice = secured.api_as(secured.create_token(unique("alice"), "ingest", tasks="alice-*"))
    mallory = secured.api_as(secured.create_token(unique("mallory"), "ingest",
                                                  tasks="mallory-*"))
    request_id = unique("create")
    squatted = mallory.request("POST", "/api/v1/task-sessions",
                               {"task_id": "mallory-1", "agent": "codex",
                                "request_id": request_id})
    assert squatted.status == 200
    answer = alice.request("POST", "/api/v1/task-sessions",
                           {"task_id": "alice-1", "agent": "codex", "request_id": request_id})
    assert answer.status == 200, answer.body[:300]
    assert answer.json()["session"]["id"] != squatted.json()["session"]["id"]
    assert answer.json()["session"]["task_id"] == "alice-1"


def test_a_restricted_token_lists_only_its_own_tasks_sessions(
        secured: Stack, admin: Api, seeded: Seeded) -> None:
    restricted = secured.api_as(secured.create_token(unique("list"), "read", tasks="repo_*"))
    page = restricted.call("GET", "/api/v1/task-sessions?sort=desc&limit=500")
    tasks = {session["task_id"] for session in page["sessions"]}
    assert seeded.mine in {session["id"] for session in page["sessions"]}
    assert all(task.startswith("repo_") for task in tasks), tasks
    assert page["total"] == len(page["sessions"])
    everything = admin.call("GET", "/api/v1/task-sessions?limit=500")
    assert seeded.other in {session["id"] for session in everything["sessions"]}
    # A session it may not see is an unknown cursor, as it is an unknown session.
    refused = restricted.request("GET", f"/api/v1/task-sessions?before={seeded.other}")
    assert refused.status == 404


def test_a_restricted_token_watches_its_own_tasks_feed(secured: Stack, seeded: Seeded) -> None:
    restricted = secured.api_as(secured.create_token(unique("feed"), "read", tasks="repo_*"))
    feed = restricted.watch(seeded.mine, "?since_revision=0")
    try:
        first = next(event for event in feed if "message" in event)  # not turn events
        assert first["message"]["session_id"] == seeded.mine
    finally:
        feed.close()


def test_health_and_reflection_stay_open(secured: Stack) -> None:
    for target in (secured.grpc_target, f"127.0.0.1:{secured.rest_port}"):
        with grpc.insecure_channel(target) as channel:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=10)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
    listed = subprocess.run([BIN / "grpcurl", "-plaintext", secured.grpc_target, "list"],
                            capture_output=True, text=True, timeout=60, check=True)
    assert "shellexec.v1.ShellExecService" in listed.stdout


@pytest.mark.parametrize("through_envoy", [False, True])
def test_grpc_callers_use_the_same_tokens(secured: Stack, seeded: Seeded,
                                          through_envoy: bool) -> None:
    target = f"127.0.0.1:{secured.rest_port}" if through_envoy else secured.grpc_target
    token = secured.create_token(unique("grpc"), "read", tasks="repo_*")
    request = pb.GetSessionRequest(session_id=seeded.mine)
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.ShellExecServiceStub(channel)
        with pytest.raises(grpc.RpcError) as missing:
            stub.GetSession(request, timeout=10)
        assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
        auth = (("authorization", f"Bearer {token}"),)
        assert stub.GetSession(request, metadata=auth, timeout=10).session.id == seeded.mine
        with pytest.raises(grpc.RpcError) as hidden:
            stub.GetSession(pb.GetSessionRequest(session_id=seeded.other), metadata=auth,
                            timeout=10)
        assert hidden.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as denied:
            stub.CreateSession(pb.CreateSessionRequest(task_id="repo_x"), metadata=auth,
                               timeout=10)
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_grpcurl_with_the_readme_header(secured: Stack, seeded: Seeded) -> None:
    token = secured.create_token(unique("grpcurl"), "read")
    answer = subprocess.run(
        [BIN / "grpcurl", "-plaintext", "-H", f"authorization: Bearer {token}", "-d",
         json.dumps({"session_id": seeded.mine}), secured.grpc_target,
         "shellexec.v1.ShellExecService/GetSession"],
        capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(answer.stdout)["session"]["id"] == seeded.mine


@pytest.mark.sqlite_only  # dumps the whole file
def test_create_prints_the_token_once_and_stores_only_its_hash(secured: Stack) -> None:
    name = unique("printed")
    done = subprocess.run([BIN / "shellexec", "token", "create", "--name", name, "--scope",
                           "read,ingest", "--tasks", "repo_*"], cwd=ROOT, env=secured.env,
                          capture_output=True, text=True, timeout=60, check=True)
    token = done.stdout.strip()
    assert re.fullmatch(r"shx_[A-Za-z0-9_-]{43}", token)
    assert token not in done.stderr
    assert "only this once" in done.stderr
    database = Path(secured.workdir / "shellexec.db")
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT * FROM api_token WHERE name = ?", (name,)).fetchall()
        dump = "\n".join(db.iterdump())
    assert len(rows) == 1
    assert hashlib.sha256(token.encode()).hexdigest() in map(str, rows[0])
    assert token not in dump
    assert token[4:] not in dump
    listed = subprocess.run([BIN / "shellexec", "token", "list"], cwd=ROOT, env=secured.env,
                            capture_output=True, text=True, timeout=60, check=True)
    line = next(line for line in listed.stdout.splitlines() if line.startswith(name))
    assert "scopes=read,ingest" in line
    assert "tasks=repo_*" in line
    assert line.endswith("active")
    assert token not in listed.stdout


@pytest.mark.parametrize(("args", "complaint"), [
    (["--name", "x y", "--scope", "read"], "name"),
    (["--name", "ok", "--scope", "write"], "scope"),
    (["--name", "ok", "--scope", "read", "--tasks", "repo/*"], "tasks"),
    # `--tasks "$PATTERN"` with PATTERN unset: every task, until empty items were refused.
    (["--name", "ok", "--scope", "read", "--tasks", ""], "--tasks"),
    (["--name", "ok", "--scope", "read", "--tasks", ","], "--tasks"),
    (["--name", "ok", "--scope", "read", "--tasks", "repo-*,"], "--tasks"),
    (["--name", "ok", "--scope", "read,"], "--scope"),
])
def test_create_refuses_bad_arguments_naming_them(secured: Stack, args: list[str],
                                                  complaint: str) -> None:
    done = subprocess.run([BIN / "shellexec", "token", "create", *args], cwd=ROOT,
                          env=secured.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"shellexec token: {complaint}:" in done.stderr


def test_token_commands_in_a_folder_with_no_database_say_so(tmp_path: Path) -> None:
    """From another folder, `token list` printed nothing and `token create` silently made a
    database there, whose token the running service never accepted."""
    env = {key: value for key, value in os.environ.items()
           if key != "SHELLEXEC_DATABASE_URL"}
    listed = subprocess.run([BIN / "shellexec", "token", "list"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 1
    assert listed.stderr.startswith(
        f"shellexec token: SHELLEXEC_DATABASE_URL: no database at {tmp_path}/data/shellexec.db")
    assert not (tmp_path / "data").exists()
    created = subprocess.run([BIN / "shellexec", "token", "create", "--name", "first",
                              "--scope", "admin"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
    assert created.returncode == 0
    assert f"made a new database at {tmp_path}/data/shellexec.db" in created.stderr


def test_a_token_name_is_used_once(secured: Stack) -> None:
    name = unique("twice")
    secured.create_token(name, "read")
    second = subprocess.run([BIN / "shellexec", "token", "create", "--name", name, "--scope",
                             "read"], cwd=ROOT, env=secured.env, capture_output=True, text=True,
                            timeout=60)
    assert second.returncode == 2
    assert second.stdout == ""
    assert "exists already" in second.stderr


def test_every_method_of_the_service_has_its_scopes_placed() -> None:
    """A method missing from the table would need `admin`: every method is placed on purpose."""
    methods = {method.name for method in pb.DESCRIPTOR.services_by_name[
        "ShellExecService"].methods}
    assert set(METHOD_SCOPES) == methods

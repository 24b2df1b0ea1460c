"""grpc-gateway compatibility: the REST answers of Envoy's front door equal those of a
grpc-gateway v2 reverse proxy generated from the same protos (tests/clients/go/gen, by
`make generate`) and configured as tests/clients/go/cmd/gateway says, both in front of the same
server. The same requests go through each (every unary route, success and error cases), each
on its own task, and their statuses and JSON bodies must be equal once server-assigned ids and
timestamps are masked. The differences that remain by design are listed in docs/api.md
("grpc-gateway compatibility"); the tests here pin them too, so the table stays true.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.acp import agent_text, codex_delta, codex_end, codex_start
from support.rest import Api
from support.stack import Stack

pytestmark = pytest.mark.slow  # builds and starts the gateway

GO_MODULE = Path(__file__).resolve().parent / "go"
_ID = re.compile(r"\b(ses|turn|msg)_[0-9a-f]{32}\b")
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6}|\.\d{9})?Z$")


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, with ids and times masked."""

    label: str
    status: int
    content_type: str
    allow: str
    body: Any


class Masks:
    """Server-assigned ids become `ses#1`, `msg#2`... in order of first appearance, the door's
    own task ids `task#1`..., and timestamps `<time>`, so two doors' answers compare."""

    def __init__(self, task_ids: list[str]) -> None:
        self._names = {task: f"task#{index}" for index, task in enumerate(task_ids, 1)}

    def _id(self, found: re.Match[str]) -> str:
        text = found.group(0)
        if text not in self._names:
            self._names[text] = f"{found.group(1)}#{len(self._names) + 1}"
        return self._names[text]

    def apply(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self.apply(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.apply(item) for item in value]
        if isinstance(value, str):
            if _TIME.match(value):
                return "<time>"
            for task, name in self._names.items():
                if task.startswith("task-"):
                    value = value.replace(task, name)
            return _ID.sub(self._id, value)
        return value


# The text of a body's JSON syntax or type error is each JSON parser's own (docs/api.md).
PARSER_TEXT = frozenset({"malformed json", "wrong field type"})


class Door:
    """The requests of the comparison through one front door, recorded as Exchanges."""

    def __init__(self, base_url: str) -> None:
        suffix = uuid.uuid4().hex[:12]
        self.address = base_url.removeprefix("http://")
        self.api = Api(base_url)
        self.task = f"task-{suffix}"
        self.other_task = f"task-{suffix}-2"
        self._masks = Masks([self.task, self.other_task])
        self.exchanges: list[Exchange] = []

    def send(self, label: str, method: str, path: str, body: Any = None, *,
             raw: bytes | None = None) -> Any:
        response = self.api.request(method, path, body, raw=raw)
        try:
            answer = response.json()
        except ValueError:
            answer = {"<not json>": response.body.decode("utf-8", "replace")}
        headers = {k.lower(): v for k, v in response.headers.items()}
        masked = self._masks.apply(answer)
        if label in PARSER_TEXT:
            masked["message"] = "<the JSON parser's own text>"
        self.exchanges.append(Exchange(label, response.status, headers.get("content-type", ""),
                                       headers.get("allow", ""), masked))
        return answer

    def watch(self, label: str, path: str, last_revision: int) -> None:
        """Reads the feed's server-sent events until the event of `last_revision` (live
        heartbeats, which a timer sends, left out) or the error that answers instead."""
        connection = http.client.HTTPConnection(self.address, timeout=30)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            content_type = response.getheader("content-type", "")
            if response.status != 200:
                body = self._masks.apply(json.loads(response.read()))
                self.exchanges.append(Exchange(label, response.status, content_type, "", body))
                return
            events = _events(response, last_revision)
            self.exchanges.append(Exchange(label, response.status, content_type, "",
                                           self._masks.apply(events)))
        finally:
            connection.close()


def _events(response: http.client.HTTPResponse, last_revision: int) -> list[Any]:
    """The opening heartbeat and the events up to `last_revision`; each must be framed as a
    server-sent event: one `data:` line, then a blank line."""
    events: list[Any] = []
    while not events or events[-1]["revision"] < last_revision or events[-1]["type"] == "heartbeat":
        line = response.readline()
        assert line.startswith(b"data: "), line
        assert response.readline() == b"\n"
        event = json.loads(line.removeprefix(b"data: "))
        if not events or event["type"] != "heartbeat":
            events.append(event)
    return events


SESSIONS = "/api/v1/task-sessions"
MISSING = f"{SESSIONS}/ses_{'0' * 32}"
CALL = "call_parity"
UPDATES = [codex_start(CALL, "ls -la"), codex_delta(CALL, "total 0\n"),
           codex_end(CALL, "total 0\n", 0)]


def play(door: Door) -> list[Exchange]:
    """Every unary route with its success and error cases, the feed, and the front door's
    own errors, in one fixed order."""
    _stateless(door)
    here = _sessions(door)
    _turn(door, here)
    _reads(door, here)
    _deletes(door, here)
    _front_door(door)
    return door.exchanges


def _stateless(door: Door) -> None:
    send = door.send
    send("normalize", "POST", "/api/v1/shell-exec:normalize",
         {"updates": UPDATES, "agent": "codex", "mask_secrets": True})
    send("normalize: no updates", "POST", "/api/v1/shell-exec:normalize", {"updates": []})
    send("normalize: update not an object", "POST", "/api/v1/shell-exec:normalize",
         {"updates": [7]})
    send("summarize", "POST", "/api/v1/shell-exec:summarize",
         {"output": {"exit_code": 1, "stdout": "a\nb\n", "truncated": False}})
    send("summarize: empty output", "POST", "/api/v1/shell-exec:summarize", {"output": {}})
    send("summarize: no output", "POST", "/api/v1/shell-exec:summarize", {})


def _sessions(door: Door) -> str:
    """Creates the door's session; returns its path."""
    send = door.send
    request_id = f"req-{uuid.uuid4().hex[:12]}"
    session = send("create session", "POST", SESSIONS,
                   {"task_id": door.task, "agent": "codex", "request_id": request_id})["session"]
    send("create session: retried request id", "POST", SESSIONS,
         {"task_id": door.task, "agent": "codex", "request_id": request_id})
    send("create session: request id reused", "POST", SESSIONS,
         {"task_id": door.other_task, "agent": "codex", "request_id": request_id})
    send("create session: no agent", "POST", SESSIONS, {"task_id": door.other_task})
    send("create session: empty task id", "POST", SESSIONS, {"task_id": ""})
    send("create session: malformed task id", "POST", SESSIONS, {"task_id": "a b"})
    here = f"{SESSIONS}/{session['id']}"
    send("get session", "GET", here)
    send("get session: unknown", "GET", MISSING)
    send("get session: not an id", "GET", f"{SESSIONS}/nope")
    return here


def _turn(door: Door, here: str) -> None:
    send = door.send
    turn = send("start turn", "POST", f"{here}/turns", {})["turn"]
    send("start turn: already running", "POST", f"{here}/turns", {})
    send("start turn: unknown session", "POST", f"{MISSING}/turns", {})
    send("start turn: malformed request id", "POST", f"{here}/turns", {"request_id": "a b"})

    updates = f"{here}/updates"
    for sequence, update in enumerate(UPDATES, 1):
        send(f"publish #{sequence}", "POST", updates, {"update": update, "sequence": sequence})
    send("publish: retried sequence", "POST", updates, {"update": UPDATES[0], "sequence": 1})
    send("publish: sequence conflict", "POST", updates,
         {"update": agent_text("other"), "sequence": 1})
    send("publish: chat text", "POST", updates, {"update": agent_text("Listing.")})
    send("publish: ignored type", "POST", updates,
         {"update": {"sessionUpdate": "available_commands_update", "availableCommands": []}})
    send("publish: update not an object", "POST", updates, {"update": "text"})
    send("publish: update null", "POST", updates, {"update": None})
    send("publish: sequence 0", "POST", updates, {"update": agent_text("x"), "sequence": 0})
    send("publish: unknown session", "POST", f"{MISSING}/updates", {"update": agent_text("x")})
    send("publish: still running", "POST", updates,
         {"update": codex_start("call_running", "sleep 60")})

    complete = f"{here}/turns/{turn['id']}:complete"
    send("complete turn", "POST", complete, {"stop_reason": "end_turn"})
    send("complete turn: again", "POST", complete, {})
    send("complete turn: unknown turn", "POST", f"{here}/turns/turn_{'0' * 32}:complete", {})


def _reads(door: Door, here: str) -> None:
    send = door.send
    messages = f"{here}/messages"
    page = send("list: first page", "GET", f"{messages}?limit=2")
    send("list: next page", "GET", f"{messages}?limit=2&after={page['cursor']}")
    send("list: desc", "GET", f"{messages}?sort=desc")
    send("list: alias", "GET", here.replace("/task-sessions/", "/agent-sessions/") + "/messages")
    send("list: negative limit", "GET", f"{messages}?limit=-1")
    send("list: before and after", "GET",
         f"{messages}?before={page['cursor']}&after={page['cursor']}")
    send("list: unknown sort", "GET", f"{messages}?sort=up")
    send("list: unknown cursor", "GET", f"{messages}?after=msg_{'0' * 32}")
    send("list: unknown session", "GET", f"{MISSING}/messages")

    shell_id, chat_id = (message["id"] for message in page["messages"])
    send("shell output", "GET", f"{messages}/{shell_id}/shell-output")
    send("shell output: unknown message", "GET", f"{messages}/msg_{'0' * 32}/shell-output")
    send("shell output: not a shell message", "GET", f"{messages}/{chat_id}/shell-output")

    revision = send("get session: after the turn", "GET", here)["session"]["revision"]
    door.watch("watch from 0", f"{messages}:watch?since_revision=0", revision)
    door.watch("watch from the middle", f"{messages}:watch?since_revision=3", revision)
    door.watch("watch: revision ahead", f"{messages}:watch?since_revision=99", 0)
    door.watch("watch: unknown session", f"{MISSING}/messages:watch", 0)

    send("boot state", "GET", f"/api/v1/tasks/{door.task}/boot-state")
    send("boot state: unknown task", "GET", f"/api/v1/tasks/{door.task}-none/boot-state")
    send("boot state: malformed task", "GET", "/api/v1/tasks/a%20b/boot-state")


def _deletes(door: Door, here: str) -> None:
    door.send("delete session", "DELETE", here)
    door.send("delete session: again", "DELETE", here)
    door.send("delete task", "DELETE", f"/api/v1/tasks/{door.other_task}")
    door.send("delete task: unknown", "DELETE", f"/api/v1/tasks/{door.other_task}")


def _front_door(door: Door) -> None:
    """What the front door answers itself."""
    send = door.send
    send("unknown route", "GET", "/api/v1/nothing")
    send("wrong method", "PUT", SESSIONS, {})
    send("wrong method on a path with variables", "PATCH", f"{MISSING}/messages")
    send("malformed json", "POST", SESSIONS, raw=b'{"task_id": ')
    send("unknown body field", "POST", SESSIONS, {"task_id": door.task, "colour": "red"})
    send("wrong field type", "POST", SESSIONS, {"task_id": 7})
    send("unknown query parameter", "GET", f"{MISSING}?colour=red")
    send("unknown query parameter of a body route", "POST", f"{SESSIONS}?colour=red",
         {"task_id": door.task})
    send("wrong query type", "GET", f"{MISSING}/messages?limit=abc")
    send("query names the path's field", "GET", f"{MISSING}?session_id=ses_{'1' * 32}")
    send("body names another session", "POST", f"{MISSING}/updates",
         {"session_id": f"ses_{'1' * 32}", "update": agent_text("x")})


@pytest.fixture(scope="module")
def gateway(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The gateway, built from tests/clients/go, in front of the stack's server."""
    binary = tmp_path_factory.mktemp("gateway") / "gateway"
    subprocess.run(["go", "build", "-o", str(binary), "./cmd/gateway"], cwd=GO_MODULE,
                   check=True)
    process = subprocess.Popen([str(binary), "-backend", stack.grpc_target],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening on "), line
        yield f"http://{line.split()[-1]}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_envoy_and_the_gateway_answer_alike(stack: Stack, gateway: str) -> None:
    envoy = play(Door(stack.rest_url))
    grpc_gateway = play(Door(gateway))
    assert [e.label for e in envoy] == [e.label for e in grpc_gateway]
    different = [(mine, theirs) for mine, theirs in zip(envoy, grpc_gateway, strict=True)
                 if mine != theirs]
    assert not different, "\n\n".join(f"{a}\n{b}" for a, b in different)


def test_the_differences_by_design_remain(stack: Stack, gateway: str) -> None:
    """The rows of docs/api.md's table that a request shows (if one stops holding, the table
    must change with it)."""
    envoy, grpc_gateway = Api(stack.rest_url), Api(gateway)
    doors = (envoy, grpc_gateway)
    broken = b'{"task_id": '
    answers = [api.request("POST", "/api/v1/task-sessions", raw=broken) for api in doors]
    assert [a.status for a in answers] == [400, 400]
    assert answers[0].json()["code"] == answers[1].json()["code"] == 3
    assert answers[0].json()["message"] != answers[1].json()["message"]

    # A query parameter of a route whose body is "*": Envoy's transcoder fills the field.
    task = f"task-{uuid.uuid4().hex[:12]}"
    agents = [api.call("POST", "/api/v1/task-sessions?agent=zed", {"task_id": task})
              ["session"]["agent"] for api in doors]
    assert agents == ["zed", ""]

    # The browser boundary is Envoy's (docs/security.md).
    path = f"/api/v1/tasks/{task}/boot-state"
    rebinding = {"host": "evil.example:8080"}
    assert envoy.request("GET", path, headers=rebinding).status == 421
    assert grpc_gateway.request("GET", path, headers=rebinding).status == 200
    answers = [api.request("GET", path) for api in doors]
    assert "content-security-policy" in {k.lower() for k in answers[0].headers}
    assert "content-security-policy" not in {k.lower() for k in answers[1].headers}

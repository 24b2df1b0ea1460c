"""Every refusal of a token says why in an ErrorInfo (docs/api.md, "Error reasons"; ADR 0050,
since 2026-12-06), through the real Envoy, in each protocol's form: the REST body's `details`,
gRPC's and gRPC-Web's `grpc-status-details-bin`, Connect's `details`. TOKEN_MISSING and
TOKEN_UNKNOWN are the front door's own 401 (its token check), SCOPE_MISSING the server's
interceptor, TASK_NOT_COVERED the use case creating the session; the caller reads them alike.
Where each reason is made: tests/app/test_token_refusal_reasons.py."""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml  # type: ignore[import-untyped]
from google.rpc import error_details_pb2, status_pb2

from shellexec.api.auth import MISSING_TOKEN, UNKNOWN_TOKEN
from shellexec.app import envoy, token_check
from shellexec.app.settings import Settings
from shellexec.client import ShellExecClient, error_details
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.vocabulary import (
    ERROR_DOMAIN,
    REASON_SCOPE_MISSING,
    REASON_TASK_NOT_COVERED,
    REASON_TOKEN_MISSING,
    REASON_TOKEN_UNKNOWN,
)

from support.rest import unique
from support.stack import Stack

# Envoy and its token check say the same whichever engine stores the tokens.
pytestmark = pytest.mark.sqlite_only

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
CREATE = "/shellexec.v1.ShellExecService/CreateSession"
# The task every case asks to create a session of; the narrow token covers `repo-*` only.
TASK = "elsewhere"


@dataclass(frozen=True)
class Case:
    reason: str
    code: grpc.StatusCode
    http: int
    token: str  # "": none; else the name of a token of `tokens`, or a made-up one


CASES = [
    Case(REASON_TOKEN_MISSING, grpc.StatusCode.UNAUTHENTICATED, 401, ""),
    Case(REASON_TOKEN_UNKNOWN, grpc.StatusCode.UNAUTHENTICATED, 401, "shx_made-up"),
    Case(REASON_SCOPE_MISSING, grpc.StatusCode.PERMISSION_DENIED, 403, "reader"),
    Case(REASON_TASK_NOT_COVERED, grpc.StatusCode.PERMISSION_DENIED, 403, "narrow"),
]
IDS = [case.reason for case in CASES]


@pytest.fixture(scope="module")
def tokens(secured: Stack) -> dict[str, str]:
    return {"reader": secured.create_token(unique("reader"), "read"),
            "narrow": secured.create_token(unique("narrow"), "ingest", tasks="repo-*"),
            "shx_made-up": "shx_made-up", "": ""}


def _authorization(tokens: dict[str, str], case: Case) -> dict[str, str]:
    token = tokens[case.token]
    return {"authorization": f"Bearer {token}"} if token else {}


def _unpadded(value: str) -> bytes:
    return base64.b64decode(value + "=" * (-len(value) % 4))


def _info(value: bytes) -> tuple[str, str, dict[str, str]]:
    info = error_details_pb2.ErrorInfo.FromString(value)
    return info.reason, info.domain, dict(info.metadata)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_rest_has_the_reason_in_the_json_details(secured: Stack, tokens: dict[str, str],
                                                 case: Case) -> None:
    response = secured.api.request("POST", "/api/v1/task-sessions", {"task_id": TASK},
                                   headers=_authorization(tokens, case))

    assert response.status == case.http, response.body
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["code"] == case.code.value[0]
    assert body["details"] == [{"@type": ERROR_INFO, "reason": case.reason,
                                "domain": ERROR_DOMAIN, "metadata": {}}]
    # The token check's headers, which carried the reason to Envoy, stay in Envoy, and REST
    # gets no gRPC trailer (as the server's errors through the transcoder get none).
    assert not {name.lower() for name in response.headers} & {
        *token_check.DETAILS_HEADERS, "grpc-status-details-bin"}


def test_the_front_door_s_401_keeps_the_check_s_message(secured: Stack) -> None:
    missing = secured.api.request("GET", "/api/v1/task-sessions")
    unknown = secured.api.request("GET", "/api/v1/task-sessions",
                                  headers={"authorization": "Basic dXNlcjpwdw=="})
    assert [missing.json()["message"], unknown.json()["message"]] == [MISSING_TOKEN,
                                                                       UNKNOWN_TOKEN]
    assert [missing.json()["details"][0]["reason"], unknown.json()["details"][0]["reason"]] == [
        REASON_TOKEN_MISSING, REASON_TOKEN_UNKNOWN]


@pytest.fixture(scope="module", params=["envoy", "server"])
def target(request: pytest.FixtureRequest, secured: Stack) -> str:
    """The front door, and the server's own gRPC port."""
    return f"127.0.0.1:{secured.rest_port}" if request.param == "envoy" else secured.grpc_target


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grpc_has_the_reason_in_its_details(tokens: dict[str, str], target: str,
                                            case: Case) -> None:
    with ShellExecClient(target, token=tokens[case.token]) as client, \
            pytest.raises(grpc.RpcError) as raised:
        client.create_session(TASK, "codex")

    error = raised.value
    assert error.code() == case.code
    found = error_details(error)
    assert (found.reason, found.domain) == (case.reason, ERROR_DOMAIN)
    [status] = [status_pb2.Status.FromString(value) for key, value in error.trailing_metadata()
                if key == "grpc-status-details-bin"]
    assert (status.code, status.message) == (case.code.value[0], error.details())


def _post(stack: Stack, headers: dict[str, str], body: bytes
          ) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    try:
        connection.request("POST", CREATE, body=body, headers=headers)
        response = connection.getresponse()
        return (response.status, {k.lower(): v for k, v in response.getheaders()},
                response.read())
    finally:
        connection.close()


def _grpc_web_trailers(headers: dict[str, str], body: bytes) -> Iterator[tuple[str, str]]:
    """A gRPC-Web answer's trailers: in its headers when it has no body (trailers-only),
    else in its trailer frame (flag 0x80)."""
    yield from headers.items()
    while len(body) >= 5:
        flag, length = body[0], int.from_bytes(body[1:5], "big")
        frame, body = body[5:5 + length], body[5 + length:]
        if flag & 0x80:
            for line in frame.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name:
                    yield name.strip().lower(), value.strip()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grpc_web_has_the_reason_in_its_details(secured: Stack, tokens: dict[str, str],
                                                case: Case) -> None:
    message = pb.CreateSessionRequest(task_id=TASK, agent="codex").SerializeToString()
    http_status, headers, body = _post(secured, {"content-type": "application/grpc-web+proto",
                                                 "x-grpc-web": "1",
                                                 **_authorization(tokens, case)},
                                       b"\0" + len(message).to_bytes(4, "big") + message)

    # The front door's own 401 stays an HTTP 401 over gRPC-Web (Envoy's gRPC-Web filter keeps
    # a local reply's status), so connect-es does not read its details itself: the TypeScript
    # client reads them from the error's metadata (tests/clients/test_conformance_typescript).
    assert http_status == (401 if case.http == 401 else 200)
    trailers = dict(_grpc_web_trailers(headers, body))
    assert trailers["grpc-status"] == str(case.code.value[0])
    status = status_pb2.Status.FromString(_unpadded(trailers["grpc-status-details-bin"]))
    [packed] = status.details
    assert _info(packed.value) == (case.reason, ERROR_DOMAIN, {})


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_connect_has_the_reason_in_its_details(secured: Stack, tokens: dict[str, str],
                                               case: Case) -> None:
    _, headers, body = _post(secured, {"content-type": "application/proto",
                                       "connect-protocol-version": "1",
                                       **_authorization(tokens, case)},
                             pb.CreateSessionRequest(task_id=TASK).SerializeToString())

    assert headers["content-type"] == "application/json"
    error = json.loads(body)
    assert error["code"] == case.code.name.lower()
    [detail] = error["details"]
    assert detail["type"] == ERROR_INFO
    assert _info(_unpadded(detail["value"])) == (case.reason, ERROR_DOMAIN, {})


def test_a_check_that_says_no_reason_keeps_the_plain_refusals(secured: Stack,
                                                              tmp_path: Path) -> None:
    """A front door whose check says no reason (one of an older release) keeps the 401s as
    they were: a mapper writing an empty reason made a body Connect clients refuse whole."""
    stack = Stack(tmp_path, grpc_port=secured.grpc_port)
    # The secured stack's server and its token check, behind a second Envoy of our own.
    settings = Settings.from_env({**secured.env, "SHELLEXEC_REST_PORT": str(stack.rest_port)})
    config = yaml.safe_load(envoy.render(settings, secured.grpc_port))
    config["admin"]["address"]["pipe"]["path"] = str(stack.admin_socket)
    for response in _dicts_with(config, "authorization_response"):
        del response["authorization_response"]["dynamic_metadata_from_headers"]
    (tmp_path / "envoy.yaml").write_text(yaml.safe_dump(config))
    with open(tmp_path / "envoy.log", "ab") as log:
        stack.envoy = envoy.launch(tmp_path / "envoy.yaml", stack.admin_socket, log, timeout=30)
    try:
        rest = stack.api.request("POST", "/api/v1/task-sessions", {"task_id": TASK})
        _, connect_headers, connect_body = _post(stack, {
            "content-type": "application/proto", "connect-protocol-version": "1"},
            pb.CreateSessionRequest(task_id=TASK).SerializeToString())
        _, grpc_web_headers, _ = _post(stack, {"content-type": "application/grpc-web+proto",
                                               "x-grpc-web": "1"}, b"\0\0\0\0\0")
    finally:
        stack.stop()

    assert rest.status == 401
    assert rest.json() == {"code": 16, "message": MISSING_TOKEN}
    assert connect_headers["content-type"] == "application/json"
    assert json.loads(connect_body) == {"code": "unauthenticated", "message": MISSING_TOKEN}
    assert grpc_web_headers["grpc-status"] == "16"
    assert "grpc-status-details-bin" not in grpc_web_headers


def _dicts_with(value: Any, key: str) -> Iterator[dict[str, Any]]:
    """Every mapping in `value` (parsed YAML) that has `key`."""
    if isinstance(value, dict):
        if key in value:
            yield value
        for item in value.values():
            yield from _dicts_with(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _dicts_with(item, key)

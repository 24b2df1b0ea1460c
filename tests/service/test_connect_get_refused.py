"""The browser boundary against Connect's GET form (`?connect=v1&encoding=proto&base64=1&
message=...`): a GET an `<img>` makes carries no Origin and needs no preflight, so the front
door refuses GET on every gRPC path, and a request a page on another port of the same host
makes (`Sec-Fetch-Site: same-site`) on the API's and gRPC's paths. Without both, a web page
could create and delete sessions and tasks of the loopback service, which runs without
authentication by default."""

from __future__ import annotations

import base64
import http.client

import pytest
from google.protobuf.message import Message

from shellexec.v1 import shell_exec_service_pb2 as pb

from support.rest import unique
from support.stack import Stack

# Envoy's routes decide: the same whichever engine stores the data.
pytestmark = pytest.mark.sqlite_only

SIBLING_PORT_IMAGE = {"sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors",
                      "sec-fetch-dest": "image"}


def connect_get(stack: Stack, method: str, request: Message,
                headers: dict[str, str]) -> int:
    """The status of a Connect GET of `method`, sent as a browser sends an image request."""
    message = base64.urlsafe_b64encode(request.SerializeToString()).decode().rstrip("=")
    path = (f"/shellexec.v1.ShellExecService/{method}?connect=v1&encoding=proto&base64=1"
            f"&message={message}")
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_an_image_on_a_sibling_port_cannot_delete_a_session(stack: Stack) -> None:
    session = stack.api.create_session(unique("victim"), "codex")["id"]
    assert connect_get(stack, "DeleteSession", pb.DeleteSessionRequest(session_id=session),
                       SIBLING_PORT_IMAGE) in (403, 405)
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session}").status == 200


def test_an_image_without_fetch_metadata_cannot_delete_a_task(stack: Stack) -> None:
    task = unique("victim")
    session = stack.api.create_session(task, "codex")["id"]
    assert connect_get(stack, "DeleteTask", pb.DeleteTaskRequest(task_id=task), {}) == 405
    assert stack.api.request("GET", f"/api/v1/task-sessions/{session}").status == 200


def test_an_image_on_a_sibling_port_cannot_create_a_session(stack: Stack) -> None:
    task = unique("planted")
    assert connect_get(stack, "CreateSession",
                       pb.CreateSessionRequest(task_id=task, agent="codex"),
                       SIBLING_PORT_IMAGE) in (403, 405)
    assert stack.api.request("GET", f"/api/v1/tasks/{task}/boot-state").status == 404


def test_a_same_site_fetch_of_the_api_is_refused(stack: Stack) -> None:
    # What a page on another port of this host sends with fetch(): not the page's origin.
    response = stack.api.request(
        "GET", "/api/v1/task-sessions?limit=1",
        headers={"sec-fetch-site": "same-site", "sec-fetch-mode": "cors"})
    assert response.status == 403
    assert response.json()["code"] == 7


def test_the_page_s_own_requests_pass(stack: Stack) -> None:
    response = stack.api.request(
        "GET", "/api/v1/task-sessions?limit=1",
        headers={"sec-fetch-site": "same-origin", "sec-fetch-mode": "cors"})
    assert response.status == 200

"""The REST calls made through Envoy's front door (standard library only): by the demo, and
by the tests, which need every answer, errors included, down to its status and headers."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class RestResponse:
    """One HTTP answer, whatever its status."""

    status: int
    body: bytes
    headers: dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


class RestError(RuntimeError):
    """The API answered with an error (`response` holds it), or not at all (`response` is
    None)."""

    def __init__(self, message: str, response: RestResponse | None = None) -> None:
        super().__init__(message)
        self.response = response


@dataclass(frozen=True)
class RestApi:
    """`base_url` is the front door, e.g. `http://127.0.0.1:8080`; `token`, when set, is sent
    as `authorization: Bearer` on every request."""

    base_url: str
    timeout: float = 30.0
    token: str = ""

    def _auth_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"} if self.token else {}

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                headers: dict[str, str] | None = None) -> RestResponse:
        """One request with a JSON `body` (or the `raw` bytes); returns the answer whatever
        its HTTP status, and raises RestError only when nothing answers."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(
            self.base_url + path, data=data, method=method,
            headers={"content-type": "application/json", **self._auth_headers(),
                     **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return RestResponse(response.status, response.read(), dict(response.headers))
        except urllib.error.HTTPError as error:
            return RestResponse(error.code, error.read(), dict(error.headers))
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            raise RestError(f"{method} {path}: {error}") from error

    def call(self, method: str, path: str, body: JsonObject | None = None) -> JsonObject:
        """The JSON answer of a request that must succeed; raises RestError otherwise."""
        response = self.request(method, path, body)
        if response.status != 200:
            detail = response.body[:500].decode("utf-8", "replace")
            raise RestError(f"{method} {path}: HTTP {response.status} {detail}", response)
        answer: JsonObject = response.json()
        return answer

    def create_session(self, task_id: str, agent: str | None = None) -> JsonObject:
        """The new session; `agent=None` leaves the field out of the request."""
        body = {"task_id": task_id} if agent is None else {"task_id": task_id, "agent": agent}
        session: JsonObject = self.call("POST", "/api/v1/task-sessions", body)["session"]
        return session

    def session(self, session_id: str) -> JsonObject:
        session: JsonObject = self.call("GET", f"/api/v1/task-sessions/{session_id}")["session"]
        return session

    def start_turn(self, session_id: str) -> str:
        answer = self.call("POST", f"/api/v1/task-sessions/{session_id}/turns", {})
        return str(answer["turn"]["id"])

    def complete_turn(self, session_id: str, turn_id: str,
                      stop_reason: str = "end_turn") -> JsonObject:
        return self.call("POST", f"/api/v1/task-sessions/{session_id}/turns/{turn_id}:complete",
                         {"stop_reason": stop_reason})

    def publish(self, session_id: str, update: JsonObject,
                sequence: int | None = None) -> JsonObject:
        """Publishes one ACP update; the answer holds the affected message."""
        body: JsonObject = {"update": update}
        if sequence is not None:
            body["sequence"] = sequence
        return self.call("POST", f"/api/v1/task-sessions/{session_id}/updates", body)

    def list_messages(self, session_id: str, query: str = "") -> JsonObject:
        """One page of message summaries; `query` is the URL's query string, `?` included."""
        return self.call("GET", f"/api/v1/task-sessions/{session_id}/messages{query}")

    def shell_output(self, session_id: str, message_id: str) -> JsonObject:
        return self.call(
            "GET", f"/api/v1/task-sessions/{session_id}/messages/{message_id}/shell-output")

    def watch(self, session_id: str, query: str = "") -> Generator[JsonObject, None, None]:
        """The session's live feed: the JSON of each server-sent event, heartbeats included,
        until the stream ends; close the iterator to disconnect. `query` is the URL's query
        string, `?` included. Raises RestError for an error answer or one that is not an event
        stream."""
        path = f"/api/v1/task-sessions/{session_id}/messages:watch{query}"
        try:
            request = urllib.request.Request(self.base_url + path, headers=self._auth_headers())
            stream = urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as error:
            answer = RestResponse(error.code, error.read(), dict(error.headers))
            raise RestError(f"GET {path}: HTTP {error.code}", answer) from error
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            raise RestError(f"GET {path}: {error}") from error
        with stream:
            kind = stream.headers.get("content-type", "")
            if not kind.startswith("text/event-stream"):
                raise RestError(f"GET {path}: answered {kind!r}, not an event stream")
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    event: JsonObject = json.loads(line[len("data:"):])
                    yield event


def probe(base_url: str, timeout: float = 2.0) -> int | None:
    """The HTTP status the front door gives a boot-state request for an unknown task, or None
    when nothing answers. 404 (or 200, or 401 asking for a token) means the API is up; 503
    means Envoy is up without the server behind it."""
    try:
        response = RestApi(base_url, timeout).request("GET", "/api/v1/tasks/demo-probe/boot-state")
    except RestError:
        return None
    return response.status

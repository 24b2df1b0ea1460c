"""The REST calls the demo makes through Envoy's front door (standard library only)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

JsonObject = dict[str, Any]


class RestError(RuntimeError):
    """The API answered with an error, or not at all."""


@dataclass(frozen=True)
class RestApi:
    """`base_url` is the front door, e.g. `http://127.0.0.1:8080`."""

    base_url: str
    timeout: float = 30.0

    def call(self, method: str, path: str, body: JsonObject | None = None) -> JsonObject:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path, data=data, method=method,
            headers={"content-type": "application/json", "accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer: JsonObject = json.loads(response.read() or b"{}")
                return answer
        except urllib.error.HTTPError as error:
            detail = error.read()[:500].decode("utf-8", "replace")
            raise RestError(f"{method} {path}: HTTP {error.code} {detail}") from error
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            raise RestError(f"{method} {path}: {error}") from error

    def create_session(self, task_id: str, agent: str) -> str:
        answer = self.call("POST", "/api/v1/task-sessions", {"task_id": task_id, "agent": agent})
        return str(answer["session"]["id"])

    def start_turn(self, session_id: str) -> str:
        answer = self.call("POST", f"/api/v1/task-sessions/{session_id}/turns", {})
        return str(answer["turn"]["id"])

    def complete_turn(self, session_id: str, turn_id: str, stop_reason: str) -> None:
        self.call("POST", f"/api/v1/task-sessions/{session_id}/turns/{turn_id}:complete",
                  {"stop_reason": stop_reason})

    def publish(self, session_id: str, update: JsonObject, sequence: int) -> None:
        self.call("POST", f"/api/v1/task-sessions/{session_id}/updates",
                  {"update": update, "sequence": sequence})


def probe(base_url: str, timeout: float = 2.0) -> int | None:
    """The HTTP status the front door gives a boot-state request for an unknown task, or None
    when nothing answers. 404 (or 200) means the API is up; 503 means Envoy is up without the
    server behind it."""
    url = f"{base_url}/api/v1/tasks/demo-probe/boot-state"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None

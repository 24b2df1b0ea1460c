"""Rules of the REST routes that a Swagger 2.0 document cannot state, applied to what
schemathesis generates (loaded through SCHEMATHESIS_HOOKS by test_openapi_fuzz.py).

- ListMessages takes `before` or `after`, not both (INVALID_ARGUMENT otherwise).
- StartTurn on a session with a running turn is FAILED_PRECONDITION, which depends on the
  session's state, not on the request: each turn a generated StartTurn opens is completed at
  once, so that every valid StartTurn the run sends next is accepted.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import requests
import schemathesis

_START_TURN = "ShellExecService_StartTurn"


@schemathesis.hook
def filter_query(context: schemathesis.HookContext, query: dict[str, Any] | None) -> bool:
    return not (query and query.get("before") and query.get("after"))


@schemathesis.hook
def after_call(context: schemathesis.HookContext, case: schemathesis.Case[Any],
               response: schemathesis.Response) -> None:
    if case.operation.definition.raw.get("operationId") != _START_TURN:
        return
    if response.status_code != 200:
        return
    turn = response.json()["turn"]
    origin = urlsplit(str(response.request.url))
    complete = (f"{origin.scheme}://{origin.netloc}/api/v1/task-sessions/"
                f"{turn['session_id']}/turns/{turn['id']}:complete")
    requests.post(complete, json={}, timeout=10).raise_for_status()

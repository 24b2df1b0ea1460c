"""The bridge picks its hint for a refused token by the refusal's reason (docs/api.md, "Error
reasons"): a token without the ingest scope is not told about --task-id, and one limited to
other tasks is not told about the scope. A refusal without a reason (a service from before
the reasons) gets the hint told from its code, which names both. The whole run against a
service: tests/bridge/test_bridge_messages_token_hints.py."""

from __future__ import annotations

from shellexec.bridge.errors import ServiceRejectedError
from shellexec.bridge.run import token_refused
from shellexec.client import ErrorDetails
from shellexec.vocabulary import (
    REASON_SCOPE_MISSING,
    REASON_TASK_NOT_COVERED,
    REASON_TOKEN_MISSING,
)

TOKEN = "shx_" + "0" * 43
SCOPE = "token 'r' may not call CreateSession: it needs the scope ingest"
TASK = "this token may not create sessions of task 'build-1'"


def _hint(code: str, message: str, reason: str = "", token: str = TOKEN,
          task_id: str = "build-1") -> str:
    refusal = ServiceRejectedError("create the session", code, message,
                                   ErrorDetails(reason=reason, domain="shellexec"))
    return str(token_refused(refusal, token, task_id))


def test_scope_missing_names_the_scope_and_not_the_task() -> None:
    said = _hint("PERMISSION_DENIED", SCOPE, REASON_SCOPE_MISSING)
    assert said.startswith(f"the service refused the token: {SCOPE} (")
    assert "the token lacks the ingest scope" in said
    assert "--task-id" not in said
    assert "build-1" not in said


def test_task_not_covered_names_the_task_and_task_id_and_not_the_scope() -> None:
    said = _hint("PERMISSION_DENIED", TASK, REASON_TASK_NOT_COVERED)
    assert "the token is limited to tasks that do not include this run's task 'build-1'" in said
    assert "pass --task-id with a task the token covers" in said
    assert "ingest" not in said
    assert "bridge-<random>" not in said


def test_task_not_covered_of_the_bridge_s_own_task_says_where_it_came_from() -> None:
    said = _hint("PERMISSION_DENIED", TASK, REASON_TASK_NOT_COVERED,
                 task_id="bridge-0123456789ab")
    assert "this run's task 'bridge-0123456789ab'" in said
    assert "without --task-id the bridge records into a new task, bridge-<random>" in said
    assert "ingest" not in said


def test_the_same_refusal_without_a_reason_gets_the_hint_naming_both() -> None:
    """A service from before the reasons: the code cannot tell scope from task."""
    without = _hint("PERMISSION_DENIED", SCOPE)
    assert "a token needs the ingest scope and, if it is limited to certain tasks" in without
    assert "pass --task-id" in without
    assert without != _hint("PERMISSION_DENIED", SCOPE, REASON_SCOPE_MISSING)


def test_token_missing_though_a_token_was_given_says_it_was_dropped_on_the_way() -> None:
    """Only the reason tells this from an unknown token: without it, an UNAUTHENTICATED with
    a token sent read as "the service does not know this token"."""
    said = _hint("UNAUTHENTICATED", "this service requires a bearer token", REASON_TOKEN_MISSING)
    assert said.startswith("the service received no token:")
    assert "dropped its `authorization` header" in said
    assert "does not know this token" not in said
    assert "does not know this token" in _hint("UNAUTHENTICATED",
                                               "this service requires a bearer token")


"""A token with many task patterns (one per repository it may see) lists its sessions through
the front door: the store's narrowing by the patterns' prefixes stays a shallow condition
however many there are (ADR 0091), where a chain of one comparison per pattern made SQLite
refuse the query from about 90 patterns and peewee overflow its recursion from about 1,000."""

from __future__ import annotations

import pytest

from shellexec.service import system_clock
from shellexec.service.tokens import Tokens
from shellexec.store import open_database
from shellexec.vocabulary import SCOPE_INGEST, SCOPE_READ

from support.rest import unique
from support.stack import Stack


def _token(stack: Stack, name: str, patterns: list[str]) -> str:
    database = open_database(stack.env["SHELLEXEC_DATABASE_URL"], readers=1)
    try:
        return Tokens(database, system_clock).create(name, [SCOPE_INGEST, SCOPE_READ], patterns)
    finally:
        database.close()


@pytest.mark.parametrize("patterns", [100, 1000])
def test_a_token_with_many_task_patterns_lists_its_sessions(secured: Stack,
                                                            patterns: int) -> None:
    task = unique("many")
    names = [f"{task}-{index}" for index in range(patterns)]
    api = secured.api_as(_token(secured, unique("t"), names))
    created = api.create_session(names[0], "codex")["id"]
    response = api.request("GET", "/api/v1/task-sessions?sort=desc&limit=5")
    assert response.status == 200, response.body[:300]
    assert [s["id"] for s in response.json()["sessions"]] == [created]

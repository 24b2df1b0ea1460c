"""Review probe (ADR 0091, ed694d5): a restricted token's ListSessions is narrowed in SQL by
one `SUBSTR(task_id, 1, n) = ?` per task pattern, joined by a left-deep chain of ORs. A token
with many patterns (a token for 100 named repositories) makes that expression too deep: SQLite
refuses it ("parser stack overflow", from about 90 patterns) and peewee overflows Python's
stack building it (about 1,000, either engine). The listing then fails for that token, where
before the narrowing it listed its sessions."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from shellexec.service import system_clock
from shellexec.service.tokens import Tokens
from shellexec.store import open_database
from shellexec.vocabulary import SCOPE_INGEST, SCOPE_READ

from support.rest import unique
from support.stack import Stack, running_stack


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory,
            new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("patterns"), SHELLEXEC_AUTH="on",
                       **new_database()) as stack:
        yield stack


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

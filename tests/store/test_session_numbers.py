"""Session numbers (the small key of events and receipts, ADR 0024) only grow: they come from a
stored counter, so deleting the newest session does not give its number to the next one, and
a creation rolled back leaves no number in use twice (ADR 0118). On both engines, in process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.store import queries


class RefusedError(Exception):
    """What the rolled-back unit of work raises once it has written its session."""


def database_url(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> str:
    return new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'numbers.db'}")


async def number_of(app: Composition, session_id: str) -> int | None:
    return await app.database.read(lambda: queries.session_number(session_id))


async def created_number(app: Composition, task_id: str) -> tuple[str, int]:
    session_id = (await app.sessions.create(task_id, "codex")).id
    number = await number_of(app, session_id)
    assert number is not None
    return session_id, number


async def rolled_back_creation(app: Composition) -> None:
    """A unit of work that creates a session and then fails: its transaction is rolled
    back."""
    def work() -> None:
        statements = app.database.statements
        statements.insert_session("ses_rolled_back", "task-rolled-back", "codex", 1)
        raise RefusedError

    with pytest.raises(RefusedError):
        await app.database.write(work)


async def numbers_after_deleting_the_newest(app: Composition) -> list[int]:
    """The numbers of A and B, then of C created after B was deleted, and of D created
    after a rolled-back creation."""
    _, a = await created_number(app, "task-a")
    b_id, b = await created_number(app, "task-b")
    await app.deletion.delete_session(b_id)
    assert await number_of(app, b_id) is None
    _, c = await created_number(app, "task-c")
    await rolled_back_creation(app)
    assert await number_of(app, "ses_rolled_back") is None
    _, d = await created_number(app, "task-d")
    return [a, b, c, d]


def test_a_deleted_session_s_number_is_never_given_again(
        tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> None:
    app = compose(Settings(database_url=database_url(tmp_path, new_database)))
    try:
        a, b, c, d = asyncio.run(numbers_after_deleting_the_newest(app))
    finally:
        app.close()
    assert a < b < c < d


def test_a_restarted_server_goes_on_from_the_highest_number_given(
        tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> None:
    url = database_url(tmp_path, new_database)

    async def create_and_delete(app: Composition) -> int:
        session_id, number = await created_number(app, "task-gone")
        await app.deletion.delete_session(session_id)
        return number

    first = compose(Settings(database_url=url))
    try:
        deleted = asyncio.run(create_and_delete(first))
    finally:
        first.close()
    second = compose(Settings(database_url=url))  # remembers nothing of the first
    try:
        _, number = asyncio.run(created_number(second, "task-next"))
    finally:
        second.close()
    assert number > deleted

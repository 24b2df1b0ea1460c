"""Migration steps 10 and 11 (ADR 0118) on a database from before them, on both engines:
CreateSession request ids become (task, request id) keys and keep their sessions and their
window, and the session counter starts at the highest number in use."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from peewee import BigIntegerField, CharField, ForeignKeyField

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.service import InvalidArgumentError
from shellexec.store import Database, open_database, queries
from shellexec.store.migrations import SCHEMA_VERSION, applied_version
from shellexec.store.models import (
    BaseModel,
    SchemaVersion,
    Session,
    SessionCounter,
    SessionRequest,
)
from shellexec.vocabulary import REASON_REQUEST_ID_REUSED

from support.clock import SettableClock

START = 1_000_000_000_000
# Rows written this long before the upgrade are still inside the 24-hour window after it.
HOUR = 3_600_000_000


class SessionRequestBefore(BaseModel):
    """`session_request` as steps 2 to 9 left it: one request id, one session, any task."""

    request_id = CharField(primary_key=True, max_length=64)
    session = ForeignKeyField(Session, column_name="session_id", on_delete="CASCADE")
    created_at = BigIntegerField(index=True)

    class Meta:
        table_name = "session_request"


def as_before_step_10(database: Database) -> None:
    """Turns a current database back into one of schema version 9, keeping its request
    ids."""
    db = database.db
    db.connect(reuse_if_open=True)
    with db.atomic(), db.bind_ctx([SessionRequestBefore]):
        kept = list(SessionRequest.select(SessionRequest.request_id, SessionRequest.session,
                                          SessionRequest.created_at).tuples())
        db.drop_tables([SessionRequest, SessionCounter])
        db.create_tables([SessionRequestBefore])
        SessionRequestBefore.insert_many(
            kept, [SessionRequestBefore.request_id, SessionRequestBefore.session,
                   SessionRequestBefore.created_at]).execute()
        SchemaVersion.delete().where(SchemaVersion.version >= 10).execute()
    db.close()


async def number_of(app: Composition, session_id: str) -> int:
    number = await app.database.read(lambda: queries.session_number(session_id))
    assert number is not None
    return number


async def sessions_of_version_9(app: Composition) -> dict[str, tuple[str, int]]:
    """Three sessions, two created with a request id: their ids and numbers by name."""
    created = {"first": await app.sessions.create("task-one", "codex", "create-1"),
               "second": await app.sessions.create("task-two", "codex", "create-2"),
               "newest": await app.sessions.create("task-one", "codex")}
    return {name: (record.id, await number_of(app, record.id))
            for name, record in created.items()}


async def after_the_upgrade(app: Composition, clock: SettableClock) -> dict[str, object]:
    clock.now += HOUR
    retried = await app.sessions.create("task-one", "codex", "create-1")
    other_task = await app.sessions.create("task-three", "codex", "create-1")
    try:
        await app.sessions.create("task-two", "claude", "create-2")
        reused: object = None
    except InvalidArgumentError as error:
        reused = error.reason
    return {"retried": retried.id, "other_task": other_task.id, "reused": reused,
            "other_task_number": await number_of(app, other_task.id),
            "rows": await app.database.read(lambda: list(SessionRequest.select(
                SessionRequest.task_id, SessionRequest.request_id, SessionRequest.created_at)
                .order_by(SessionRequest.task_id).tuples()))}


def test_an_older_database_keeps_its_request_ids_per_task_and_numbers_on(
        tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> None:
    url = new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'v9.db'}")
    clock = SettableClock(START)
    app = compose(Settings(database_url=url), clock)
    try:
        before = asyncio.run(sessions_of_version_9(app))
    finally:
        app.close()
    older = open_database(url)
    try:
        as_before_step_10(older)
    finally:
        older.close()

    upgraded = compose(Settings(database_url=url), clock)
    try:
        version = asyncio.run(upgraded.database.read(
            lambda: applied_version(upgraded.database.db)))
        after = asyncio.run(after_the_upgrade(upgraded, clock))
    finally:
        upgraded.close()

    assert version == SCHEMA_VERSION
    assert after["retried"] == before["first"][0]  # kept, with its window
    assert after["other_task"] not in {session_id for session_id, _ in before.values()}
    assert after["reused"] == REASON_REQUEST_ID_REUSED
    # The first session after the upgrade: the counter started at the highest number.
    assert after["other_task_number"] == max(number for _, number in before.values()) + 1
    assert after["rows"] == [("task-one", "create-1", START), ("task-three", "create-1",
                                                               START + HOUR),
                             ("task-two", "create-2", START)]

"""Migration step 9 (ADR 0091): a database from before it gets each session's command and
failure counts counted once from its messages, and they are kept from then on."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings

from support.acp import agent_text, codex_end, codex_start


def publish_all(app: Composition, session_id: str, updates: list[dict[str, object]]) -> None:
    for update in updates:
        asyncio.run(app.publisher.publish(session_id, update, None))


def counts(app: Composition, session_id: str) -> tuple[int, int]:
    record = asyncio.run(app.sessions.get(session_id))
    return record.command_count, record.failure_count


def test_an_upgraded_database_counts_its_commands_once_and_keeps_counting(
        tmp_path: Path) -> None:
    path = tmp_path / "upgraded.db"
    settings = Settings(database_url=f"sqlite:///{path}")
    app = compose(settings)
    session_id = asyncio.run(app.sessions.create("task-counted", "codex")).id
    asyncio.run(app.sessions.start_turn(session_id))
    publish_all(app, session_id, [
        codex_start("a", "make"), codex_end("a", "ok\n", 0),
        codex_start("b", "make test"), codex_end("b", "FAIL\n", 2),
        codex_start("c", "make lint"),  # running: not a failure
        agent_text("no command"),
    ])
    assert counts(app, session_id) == (3, 1)
    app.close()
    with sqlite3.connect(path) as db:  # as step 9 finds a database of before it
        db.execute("DELETE FROM schema_version WHERE version >= 9")
        db.execute("ALTER TABLE session DROP COLUMN command_count")
        db.execute("ALTER TABLE session DROP COLUMN failure_count")
    db.close()

    reopened = compose(settings)
    try:
        assert counts(reopened, session_id) == (3, 1)
        publish_all(reopened, session_id, [codex_end("c", "lint errors\n", 1)])
        assert counts(reopened, session_id) == (3, 2)
    finally:
        reopened.close()

"""What a start does about a database that an older or a broken run left behind: a session
an older shellexec numbered past the counter heals on the next start, and a step that fails
is rolled back and named as what failed. On both engines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from peewee import Database as PeeweeDatabase
from store.test_weighed_reads import run

from shellexec.app import cli
from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.store import SCHEMA_VERSION, MigrationFailedError, migrations, open_database
from shellexec.store.models import SESSION_COUNTER_ROW, SchemaVersion, SessionCounter

from support.stack import up_environment


def _database_url(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> str:
    return new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'db.sqlite'}")


def test_sessions_an_older_shellexec_numbered_past_the_counter_heal_on_the_next_start(
        tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> None:
    """A shellexec from before the check of newer schemas ran on a migrated database and
    numbered its session without the counter: every later CreateSession failed on a number
    already taken, for good (a probe rolled back and forth across an upgrade)."""
    url = _database_url(tmp_path, new_database)
    app = compose(Settings(database_url=url))
    try:
        run(app.sessions.create("task-before", "codex"))
        run(app.sessions.create("task-older", "codex"))
        db: PeeweeDatabase = app.database.db
        run(app.database.read(lambda: None))  # connected
        with db.connection_context():  # the older shellexec took number 2 and left 1
            SessionCounter.update(highest_number=1).where(
                SessionCounter.id == SESSION_COUNTER_ROW).execute()
    finally:
        app.close()
    app = compose(Settings(database_url=url))
    try:
        created = run(app.sessions.create("task-after", "codex"))
        assert created.task_id == "task-after"
        listed = run(app.sessions.list_sessions(10, "", "", False))
        assert sorted(session.task_id for session in listed.sessions) == [
            "task-after", "task-before", "task-older"]
    finally:
        app.close()


def _failing_step(db: PeeweeDatabase) -> None:
    db.execute_sql("CREATE TABLE made_by_the_step (x INTEGER)")  # type: ignore[no-untyped-call]
    db.execute_sql("SELECT x FROM no_such_table")  # type: ignore[no-untyped-call]


def test_a_failed_step_is_rolled_back_and_named(
        tmp_path: Path, new_database: Callable[[], dict[str, str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = _database_url(tmp_path, new_database)
    open_database(url, pool_size=1).close()
    monkeypatch.setattr(migrations, "STEPS", (*migrations.STEPS, _failing_step))
    with pytest.raises(MigrationFailedError) as failed:
        open_database(url, pool_size=1)
    assert str(failed.value).startswith(
        f"migrating the database failed at step {SCHEMA_VERSION + 1} (failing step) and was "
        f"rolled back; the database is as it was, at schema version {SCHEMA_VERSION}: ")
    assert "no_such_table" in str(failed.value)
    monkeypatch.undo()
    database = open_database(url, pool_size=1)
    try:
        db: PeeweeDatabase = database.db
        with db.connection_context(), db.bind_ctx([SchemaVersion]):
            assert max(row.version for row in SchemaVersion.select()) == SCHEMA_VERSION
            assert "made_by_the_step" not in db.get_tables()
    finally:
        database.close()


@pytest.mark.sqlite_only
def test_shellexec_up_says_which_step_failed_not_which_setting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    open_database(url, pool_size=1).close()
    monkeypatch.setattr(migrations, "STEPS", (*migrations.STEPS, _failing_step))
    monkeypatch.chdir(tmp_path)
    for name, value in up_environment(url).items():
        monkeypatch.setenv(name, value)
    assert cli.main(["up"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("shellexec: migrating the database failed at step")
    assert "SHELLEXEC_DATABASE_URL" not in error

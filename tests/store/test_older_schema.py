"""A token command on a database an older shellexec made refuses to migrate it: an older
server may still run on it, and failed every publish once its schema moved (a probe: `shellexec
token list` of a newly installed release, its server not yet restarted). The server migrates
it as it starts; a new database is still made by `token create`."""

from __future__ import annotations

from pathlib import Path

import pytest
from peewee import SqliteDatabase

from shellexec.app import cli
from shellexec.store import SCHEMA_VERSION, OlderSchemaError, open_database
from shellexec.store.migrations import STEPS, applied_version
from shellexec.store.models import ALL_MODELS, SchemaVersion

pytestmark = pytest.mark.sqlite_only  # `migrate` decides it for both engines


def _made_by_the_first_release(path: Path) -> str:
    old = SqliteDatabase(str(path))
    old.bind(ALL_MODELS)
    with old.atomic():
        applied_version(old)
        STEPS[0](old)
        SchemaVersion.create(version=1, applied_at=0)
    old.close()
    return f"sqlite:///{path}"


def _version(path: Path) -> int:
    db = SqliteDatabase(str(path))
    db.bind(ALL_MODELS)
    try:
        return applied_version(db)
    finally:
        db.close()


@pytest.mark.parametrize("command", [
    ["token", "list"],
    ["token", "create", "--name", "ci", "--scope", "ingest"],
    ["token", "revoke", "ci"],
])
def test_a_token_command_leaves_an_older_database_as_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: list[str]) -> None:
    path = tmp_path / "old.db"
    monkeypatch.setenv("SHELLEXEC_DATABASE_URL", _made_by_the_first_release(path))
    assert cli.main(command) == 1
    said = capsys.readouterr().err
    assert f"schema version 1, older than this shellexec's {SCHEMA_VERSION}" in said
    assert "start this shellexec's server on it first" in said
    assert _version(path) == 1


def test_once_the_server_migrated_it_the_token_commands_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _made_by_the_first_release(tmp_path / "old.db")
    with pytest.raises(OlderSchemaError):
        open_database(url, upgrade=False)
    open_database(url).close()  # as the server opens it
    monkeypatch.setenv("SHELLEXEC_DATABASE_URL", url)
    assert cli.main(["token", "create", "--name", "ci", "--scope", "ingest"]) == 0
    assert cli.main(["token", "list"]) == 0


def test_a_new_database_is_still_made_by_token_create(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'new.db'}")
    assert cli.main(["token", "create", "--name", "first", "--scope", "admin"]) == 0
    assert _version(tmp_path / "new.db") == SCHEMA_VERSION

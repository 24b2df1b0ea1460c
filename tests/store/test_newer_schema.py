"""A server started on a database that a newer shellexec migrated (a schema version past its
own steps) refuses to open it, and says so, instead of misreading or damaging what the newer
steps changed; a running server's readiness names the mismatch too. On both engines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from peewee import Database as PeeweeDatabase

from shellexec.app import cli
from shellexec.store import SCHEMA_VERSION, NewerSchemaError, open_database
from shellexec.store.models import SchemaVersion
from shellexec.store.readiness import readiness_problem

from support.stack import up_environment


def _database_url(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> str:
    return new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'newer.db'}")


def _migrated_by_a_newer_shellexec(url: str) -> None:
    database = open_database(url, pool_size=1)
    db: PeeweeDatabase = database.db
    try:
        with db.connection_context(), db.bind_ctx([SchemaVersion]), db.atomic():
            SchemaVersion.create(version=SCHEMA_VERSION + 1, applied_at=0)
    finally:
        database.close()


def test_a_database_a_newer_shellexec_migrated_is_refused(
        tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> None:
    url = _database_url(tmp_path, new_database)
    _migrated_by_a_newer_shellexec(url)
    with pytest.raises(NewerSchemaError) as refused:
        open_database(url, pool_size=1)
    assert refused.value.version == SCHEMA_VERSION + 1
    assert f"schema version {SCHEMA_VERSION + 1}" in str(refused.value)


@pytest.mark.sqlite_only  # the file check; PostgreSQL's has the same comparison
def test_readiness_names_a_newer_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    _migrated_by_a_newer_shellexec(url)
    problem = readiness_problem(tmp_path / "newer.db")
    assert problem is not None
    assert f"schema version {SCHEMA_VERSION + 1}" in problem


@pytest.mark.sqlite_only
def test_shellexec_up_says_why_it_does_not_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    _migrated_by_a_newer_shellexec(url)
    monkeypatch.chdir(tmp_path)
    for name, value in up_environment(url).items():
        monkeypatch.setenv(name, value)
    assert cli.main(["up"]) == 1
    assert f"schema version {SCHEMA_VERSION + 1}, newer than" in capsys.readouterr().err


@pytest.mark.sqlite_only
def test_the_token_commands_say_why_they_do_not_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    _migrated_by_a_newer_shellexec(url)
    monkeypatch.setenv("SHELLEXEC_DATABASE_URL", url)
    assert cli.main(["token", "list"]) == 1
    assert f"schema version {SCHEMA_VERSION + 1}, newer than" in capsys.readouterr().err

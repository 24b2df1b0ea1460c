"""The tests' PostgreSQL server: one `LocalPostgres` per test session (fsync off: the tests
kill replicas and restart the server cleanly, never the machine). Each stack gets a fresh
database copied from a migrated template (`CREATE DATABASE ... TEMPLATE`), which costs a file
copy instead of a migration."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from shellexec.app.local_postgres import LocalPostgres
from shellexec.store import open_database

TEMPLATE = "shellexec_template"


@dataclass
class PostgresServer:
    """The run's cluster and the databases it made for stacks."""

    local: LocalPostgres
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def create(cls) -> PostgresServer:
        local = LocalPostgres.create(durable=False)
        open_database(local.create_database(TEMPLATE), pool_size=2).close()  # migrated once
        return cls(local)

    def new_database(self) -> str:
        """The URL of a new, migrated, empty database."""
        return self.local.create_database(f"stack_{next(self._names)}", TEMPLATE)

    def restart(self) -> None:
        self.local.restart()

    def remove(self) -> None:
        self.local.remove()

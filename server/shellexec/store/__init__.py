"""Persistence: peewee models, the database set-up and the queries the service needs.

Output bodies live in `OutputChunk` rows apart from the summary columns of `Message`, so
listing, boot state and the feed never read a body.
"""

from __future__ import annotations

from shellexec.store.database import Database
from shellexec.store.errors import (
    DatabaseFullError,
    DatabaseLockedError,
    DatabaseOpenError,
    DatabaseUnavailableError,
    MigrationFailedError,
    NewerSchemaError,
    OlderSchemaError,
    StoreError,
    UnsupportedDatabaseError,
)
from shellexec.store.migrations import SCHEMA_VERSION, migrate
from shellexec.store.opening import (
    database_url_problem,
    open_database,
    shown_database_url,
    sqlite_file,
)
from shellexec.store.statements import Statements

__all__ = [
    "SCHEMA_VERSION",
    "Database",
    "DatabaseFullError",
    "DatabaseLockedError",
    "DatabaseOpenError",
    "DatabaseUnavailableError",
    "MigrationFailedError",
    "NewerSchemaError",
    "OlderSchemaError",
    "Statements",
    "StoreError",
    "UnsupportedDatabaseError",
    "database_url_problem",
    "migrate",
    "open_database",
    "shown_database_url",
    "sqlite_file",
]

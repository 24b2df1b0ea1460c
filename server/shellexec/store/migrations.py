"""Schema migrations, applied in order at start-up.

Each step is a function that receives the database inside a transaction. Step 1 creates the
tables as first released (`VERSION_1_MODELS`: a new table belongs to the step that adds it, so
a new database goes through the same steps as an old one); later steps create tables or use
`playhouse.migrate` operations. Never change what a released step does: add one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from peewee import Database as PeeweeDatabase

from shellexec.store.models import REQUEST_MODELS, TOKEN_MODELS, VERSION_1_MODELS, SchemaVersion

MigrationStep = Callable[[PeeweeDatabase], None]


def _create_schema(db: PeeweeDatabase) -> None:
    db.create_tables([m for m in VERSION_1_MODELS if m is not SchemaVersion])


def _add_request_ids(db: PeeweeDatabase) -> None:
    """The request ids that make CreateSession and StartTurn idempotent (ADR 0007)."""
    db.create_tables(list(REQUEST_MODELS))


def _add_tokens(db: PeeweeDatabase) -> None:
    """The bearer tokens callers authenticate with (ADR 0050)."""
    db.create_tables(list(TOKEN_MODELS))


STEPS: tuple[MigrationStep, ...] = (_create_schema, _add_request_ids, _add_tokens)
SCHEMA_VERSION = len(STEPS)


def applied_version(db: PeeweeDatabase) -> int:
    """The highest applied step, 0 for a new database."""
    db.create_tables([SchemaVersion])
    latest = SchemaVersion.select(SchemaVersion.version).order_by(
        SchemaVersion.version.desc()).first()
    return int(latest.version) if latest else 0


def migrate(db: PeeweeDatabase) -> int:
    """Applies every step the database lacks; returns the resulting schema version."""
    with db.atomic():
        current = applied_version(db)
        for version, step in enumerate(STEPS[current:], start=current + 1):
            step(db)
            SchemaVersion.create(version=version, applied_at=time.time_ns() // 1000)
    return SCHEMA_VERSION

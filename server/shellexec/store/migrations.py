"""Schema migrations, applied in order at start-up.

Each step is a function that receives the database inside a transaction. Step 1 creates the
tables as first released (`VERSION_1_MODELS`: a new table belongs to the step that adds it, so
a new database goes through the same steps as an old one); later steps create tables or use
`playhouse.migrate` operations. Never change what a released step does: add one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from peewee import BigIntegerField, CompositeKey, ForeignKeyField, IntegerField
from peewee import Database as PeeweeDatabase
from playhouse.migrate import SqliteMigrator
from playhouse.migrate import migrate as run_operations

from shellexec.store.models import (
    REQUEST_MODELS,
    VERSION_1_MODELS,
    BaseModel,
    PublishReceipt,
    SchemaVersion,
    Session,
)

MigrationStep = Callable[[PeeweeDatabase], None]


class _PublishReceiptV1(BaseModel):
    """`publish_receipt` as step 1 created it (the model has since gained a column)."""

    session = ForeignKeyField(Session, column_name="session_id", on_delete="CASCADE")
    sequence = BigIntegerField()
    message_position = IntegerField(null=True)

    class Meta:
        table_name = "publish_receipt"
        primary_key = CompositeKey("session", "sequence")


def _create_schema(db: PeeweeDatabase) -> None:
    created = [m for m in VERSION_1_MODELS if m not in (SchemaVersion, PublishReceipt)]
    with db.bind_ctx([_PublishReceiptV1]):
        db.create_tables([*created, _PublishReceiptV1])


def _add_request_ids(db: PeeweeDatabase) -> None:
    """The request ids that make CreateSession and StartTurn idempotent (ADR 0007)."""
    db.create_tables(list(REQUEST_MODELS))


def _add_payload_digests(db: PeeweeDatabase) -> None:
    """A digest of each receipt's update, so a sequence reused for another update is a
    conflict (ADR 0060). Receipts from before have none and stay plain duplicates."""
    migrator = SqliteMigrator(db)
    run_operations(migrator.add_column(
        PublishReceipt._meta.table_name, PublishReceipt.payload_digest.column_name,
        PublishReceipt.payload_digest))


STEPS: tuple[MigrationStep, ...] = (_create_schema, _add_request_ids, _add_payload_digests)
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

"""The queries and writes of bearer tokens.

Tokens are written by the `shellexec token` command, each write in a transaction of its own on
a connection of the command's own: they are not units of work of the serving path, so they use the
models' own queries rather than the compiled `Statements` (ADR 0020 covers units of work).
The server only reads them.
"""

from __future__ import annotations

from typing import Any

from peewee import Database as PeeweeDatabase
from peewee import SqliteDatabase

from shellexec.store.models import ApiToken


def active_token(token_hash: str) -> ApiToken | None:
    """The unrevoked token with this hash (inside a read)."""
    return ApiToken.get_or_none((ApiToken.token_hash == token_hash)
                                & ApiToken.revoked_at.is_null())


def token_is_active(name: str) -> bool:
    """Whether the token named `name` exists and is not revoked (inside a read)."""
    return ApiToken.select().where((ApiToken.name == name)
                                   & ApiToken.revoked_at.is_null()).exists()


def all_tokens(db: PeeweeDatabase) -> list[ApiToken]:
    with db.connection_context():
        return list(ApiToken.select().order_by(ApiToken.name))


def insert_token(db: PeeweeDatabase, name: str, token_hash: str, scopes: str,
                 task_patterns: str, now: int) -> bool:
    """Stores a new token; False when a token of that name exists (revoked ones included:
    names stay unique so the audit of who had what stays readable)."""
    with db.connection_context(), _write_transaction(db):
        if ApiToken.get_or_none(ApiToken.name == name) is not None:
            return False
        ApiToken.insert(name=name, token_hash=token_hash, scopes=scopes,
                        task_patterns=task_patterns, created_at=now).execute()
        return True


def revoke_token(db: PeeweeDatabase, name: str, now: int) -> bool:
    """Revokes the named token; False when there is no such unrevoked token."""
    with db.connection_context(), _write_transaction(db):
        changed: int = ApiToken.update(revoked_at=now).where(
            (ApiToken.name == name) & ApiToken.revoked_at.is_null()).execute()
    return changed == 1


def _write_transaction(db: PeeweeDatabase) -> Any:
    """A transaction that takes SQLite's write lock first, waiting for it as long as the busy
    timeout says. A deferred one read, and its write then failed at once ("database is
    locked", SQLITE_BUSY_SNAPSHOT, which no wait cures) whenever the server had committed
    meanwhile: `shellexec token create` failed so in 4 of 15 runs while a bridge recorded (as
    the migrations did, ADR 0118)."""
    return db.atomic("IMMEDIATE") if isinstance(db, SqliteDatabase) else db.atomic()


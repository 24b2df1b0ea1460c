"""Errors raised by the store, and `driver_errors` to find a driver's error under another.

    StoreError
    ├── UnsupportedDatabaseError   the DATABASE_URL names an engine the store does not run on
    ├── DatabaseOpenError          the SQLite file cannot be opened, read or written
    ├── StaleWriteError            a row changed since it was read (another writer)
    ├── DatabaseUnavailableError   the database server cannot be reached (PostgreSQL); retry
    │   └── DatabaseFullError      the database's disk is full: nothing was stored; retry
    ├── NewerSchemaError           a newer shellexec migrated the database past this one
    └── OlderSchemaError           the database lacks steps, and migrating was not asked for
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every store error."""


class UnsupportedDatabaseError(StoreError):
    """The database URL names an engine the store does not support."""

    def __init__(self, engine: str) -> None:
        super().__init__(f"unsupported database {engine!r}; use sqlite:///PATH or postgresql://...")
        self.engine = engine


class DatabaseOpenError(StoreError):
    """The SQLite database cannot be opened, read or written (a folder, a file that is no
    database, a read-only file or folder): found when the store opens, not at the first
    write, which a ready server would answer with INTERNAL."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot use the SQLite database {path[:200]!r}: {reason[:200]}")
        self.path = path


class StaleWriteError(StoreError):
    """A message row is no longer at the state version its writer read."""

    def __init__(self, position: int) -> None:
        super().__init__(f"message {position} changed since it was read")
        self.position = position


class DatabaseUnavailableError(StoreError):
    """The database server did not answer (down, restarting, unreachable): the work was not
    done, or, when the connection broke during COMMIT, its outcome is unknown. Either way a
    retry is safe: publishes are idempotent by sequence, creations by request id."""

    def __init__(self, reason: str = "", *, outcome_unknown: bool = False) -> None:
        # The driver's first line says why (refused, no such host, a password refused); it
        # names the host, port and user, never the password.
        why = " ".join(reason.split("\n", 1)[0].split())[:240]
        super().__init__("the database is unavailable" + (f" ({why})" if why else "")
                         + "; retry shortly")
        # The work may have been stored (the connection failed once COMMIT was sent).
        self.outcome_unknown = outcome_unknown


class DatabaseLockedError(DatabaseUnavailableError):
    """Another program held the SQLite file's write lock (the `sqlite3` shell in a
    transaction, a backup tool) for the whole busy timeout, or holds it while a write waits
    for it: the write did not begin, nothing was stored. Answered like an unavailable
    database (UNAVAILABLE, retry)."""

    def __init__(self, busy_timeout_ms: int) -> None:
        StoreError.__init__(self, "the database is locked by another program (a write waits "
                            f"up to {busy_timeout_ms} ms for it); retry shortly")
        self.outcome_unknown = False


class DatabaseFullError(DatabaseUnavailableError):
    """The database's disk is full (or the file at its `max_page_count`): a write found no
    room, and nothing of it was stored (SQLite rolls the transaction back). Reads go on.
    Answered like an unavailable database (UNAVAILABLE, retry): the write succeeds once space
    is freed."""

    def __init__(self, reason: str = "") -> None:
        why = " ".join(reason.split("\n", 1)[0].split())[:240]
        StoreError.__init__(self, "the database's disk is full, so nothing was stored"
                            + (f" ({why})" if why else "") + "; retry once space is freed")
        self.outcome_unknown = False


class MigrationFailedError(StoreError):
    """A migration step failed. The steps run in one transaction, so the database is left as
    it was, at `version`, and a server that knows the steps can try again once the cause is
    gone (a table some other program made, a full disk)."""

    def __init__(self, version: int, step: int, name: str, reason: str) -> None:
        super().__init__(
            f"migrating the database failed at step {step} ({name}) and was rolled back; the "
            f"database is as it was, at schema version {version}: {reason[:300]}")
        self.version = version
        self.step = step


class NewerSchemaError(StoreError):
    """The database has migration steps this server does not know: a newer shellexec
    migrated it, and this one would misread or damage what those steps changed."""

    def __init__(self, version: int, known: int) -> None:
        super().__init__(
            f"the database is at schema version {version}, newer than this shellexec's {known}: "
            "run the shellexec that migrated it (or a newer one)")
        self.version = version
        self.known = known


class OlderSchemaError(StoreError):
    """The database lacks migration steps this shellexec knows, and the command that opened
    it does not migrate: an older server may still run on it, and would fail on what the
    steps change."""

    def __init__(self, version: int, known: int) -> None:
        super().__init__(
            f"the database is at schema version {version}, older than this shellexec's {known}: "
            "start this shellexec's server on it first (it migrates the database as it "
            "starts), then run this again; this command does not migrate a database an older "
            "server may be running on")
        self.version = version
        self.known = known


def driver_errors(error: BaseException) -> tuple[BaseException | None, ...]:
    """`error` and what it may hide a database driver's error under: peewee's `orig`, the
    error it was raised from (`__cause__`) or during (`__context__`). Each engine's checks
    look through these for the driver's own error, which carries the code to tell by."""
    return error, getattr(error, "orig", None), error.__cause__, error.__context__


"""PostgreSQL as the shared store of several replicas (ADR 0070).

Writes keep SQLite's group commit and its rules (`store.database`), with two differences that
follow from a database reached over the network and written by other processes:

- A group runs entirely on the writer thread: BEGIN, the units of work, COMMIT. A statement
  is a message to the server, which the event loop must not wait for; the units of work are
  written for one thread at a time, and the writer is that one thread (its caches with it).
  The driver releases the interpreter lock while it waits on the socket, so the loop keeps
  serving meanwhile.
- The statements go out through a pipeline (ADR 0138): the writer waits only where a unit
  reads a result, before COMMIT (`Statements.verify` checks every message update's row
  count), and for COMMIT. A group of N small publishes to one session costs three round
  trips instead of 4 + 4N.
- Before the units run, the group locks the rows of the sessions they change, in id order
  (`Statements.lock_sessions`). Another replica's group on the same session waits for this
  commit, then reads what it committed: revisions stay gap-free, a tool call's fold is
  applied once, and a publish sequence is looked up after any other replica stored it. The
  primary keys of events and receipts stay the last word.

Acknowledgement means durable: a unit's caller hears of it only after its group's COMMIT
returned, and PostgreSQL returns from COMMIT once the WAL is flushed (synchronous_commit on,
its default). When the connection breaks, every unit of the group gets
`DatabaseUnavailableError` (the outcome of a COMMIT in flight is unknown, and a retry with the
same sequence or request id is safe); the next group connects again.

Reads run on reader threads in REPEATABLE READ transactions, so every read of a transaction
sees one commit, as WAL readers do in SQLite. The connections are `pool_size`: one for the
writer, the rest for the readers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlparse

import psycopg
from peewee import InterfaceError, OperationalError, PostgresqlDatabase, Select, fn
from psycopg.conninfo import conninfo_to_dict

from shellexec.store.database import Database, Job, Outcome
from shellexec.store.errors import DatabaseUnavailableError, driver_errors
from shellexec.store.feed_notices import CHANNEL, FeedListener, FeedNotice
from shellexec.store.migrations import migrate
from shellexec.store.models import ALL_MODELS, Session
from shellexec.store.readiness import postgres_readiness_problem

T = TypeVar("T")

SCHEMES = ("postgresql", "postgres")
# libpq's values of `sslmode`.
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
# Connections of one replica: the writer's and the readers'.
DEFAULT_POOL_SIZE = 4
# Seconds a connection attempt may take: a database that is down fails a call quickly.
CONNECT_TIMEOUT_SECONDS = 3
# An idle connection is probed after 10 s of silence, every 5 s, and given up after 3
# unanswered probes; data sent and not acknowledged for 15 s ends the connection (a write in
# flight answers UNAVAILABLE then, its outcome unknown when it was the COMMIT).
NETWORK_FAILURE_OPTIONS: dict[str, Any] = {
    "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3,
    "tcp_user_timeout": 15_000}
# How long a write transaction may wait for a row lock another transaction holds, and how long
# it may sit idle (its replica neither sending nor committing) before the server ends it. A
# replica that stops inside a transaction (frozen, paused, cut off with its connection open)
# would otherwise hold its sessions' rows until TCP gave up on it (hours), and every other
# replica's writer would wait behind them, all sessions with it (ADR 0070, since 2026-12-05).
# A healthy group holds its locks for milliseconds, and a unit's longest pause between
# statements (the fold of a 4 MiB update) is about a second.
WRITE_LOCK_TIMEOUT_SECONDS = 5.0
WRITE_IDLE_TIMEOUT_SECONDS = 10.0
# How long the sessions of a group that waited the lock timeout are each asked for their rows
# (at most that timeout): one a healthy transaction holds (a second, at most) is then not
# taken for held, and the held one costs this, not a second lock timeout.
HELD_PROBE_SECONDS = 1.0
# The most sessions noted as held by another transaction at once.
MAX_HELD_SESSIONS = 1024
# The key of the advisory lock that replicas starting together take to migrate one at a time
# ("migrate" in hexadecimal digits).
MIGRATION_LOCK = 0x6D696772617465

_CONNECTION_ERRORS = (OperationalError, InterfaceError, psycopg.OperationalError,
                      psycopg.InterfaceError)
# What a COMMIT can answer that says it did not commit: a serialization failure or a deadlock
# (class 40), a deferred constraint (class 23).
_ROLLED_BACK = (psycopg.errors.TransactionRollback, psycopg.errors.IntegrityError)


def _lock_not_available(error: BaseException) -> bool:
    """Whether `error` is a lock wait past `lock_timeout` (or a NOWAIT lock refused): the
    driver's LockNotAvailable, or peewee's OperationalError raised from it."""
    return any(isinstance(found, psycopg.errors.LockNotAvailable)
               for found in driver_errors(error))


def _stale_plan(error: BaseException) -> bool:
    """Whether `error` (the driver's, or peewee's raised from it) is PostgreSQL refusing a
    statement this connection prepared before a schema change altered the type of a column it
    returns ("cached plan must not change result type"): another replica's migration did, in
    a rolling upgrade. The statement fails so for as long as the connection lives, whatever
    the transaction; a new connection prepares it anew. Known by the function that raises it
    (the message may be translated)."""
    for found in driver_errors(error):
        if isinstance(found, psycopg.errors.FeatureNotSupported) and (
                found.diag.source_function == "RevalidateCachedQuery"
                or "cached plan must not change result type" in str(found)):
            return True
    return False


def _drain(pipeline: psycopg.Pipeline) -> None:
    """Reads what a failed transaction left in `pipeline`, errors and all. After a refused
    statement the server skips every statement until the next sync, and leaving the pipeline
    would otherwise report each one again, as a warning of the driver's own (the transaction
    is rolled back either way)."""
    with contextlib.suppress(psycopg.Error):
        pipeline.sync()


def is_postgres_url(url: str) -> bool:
    return urlparse(url).scheme in SCHEMES


def postgres_url_problem(url: str) -> str | None:
    """Why libpq would not connect with `url` whatever the server's state, or None. libpq's
    own messages quote the URL, password included, so none is passed on."""
    try:
        options = conninfo_to_dict(_conninfo(url))
    except psycopg.ProgrammingError:
        return ("is not a PostgreSQL URL libpq can read (not repeated here: it may hold a "
                "password; a % in it is written %25); use "
                "postgresql://USER:PASSWORD@HOST:PORT/NAME")
    # Neither value is quoted: a `/` in a password makes libpq read `USER:PASSWORD@` as a host
    # and a port, so the "port" may be the password.
    ports = str(options.get("port", ""))
    if any(port and not (port.isascii() and port.isdigit() and 0 < int(port) <= 65535)
           for port in ports.split(",")):
        return ("has a port that is not a number from 1 to 65535 (not repeated here: it may be "
                "a password; a / in a password is written %2F)")
    mode = options.get("sslmode")
    if mode is not None and mode not in SSL_MODES:
        return f"has an sslmode libpq does not take: it takes {', '.join(SSL_MODES)}"
    return None


def _conninfo(url: str) -> str:
    """`url` as libpq reads it (peewee and psycopg take `postgresql:` alone). Only the scheme
    is replaced: a URL rebuilt from its parts loses the `//` of one without a host
    (`postgres:///shellexec?host=/var/run/postgresql`, a Unix socket)."""
    return "postgresql" + url[len(urlparse(url).scheme):]


def network_failure_options(url: str) -> dict[str, Any]:
    """libpq's TCP settings that find a database server gone from the network (its machine
    died, a partition), those of NETWORK_FAILURE_OPTIONS the URL does not set itself. Without
    them a connection waited for the kernel's own retries, about fifteen minutes, and every
    write of the replica with it. libpq ignores them on a Unix socket."""
    given = conninfo_to_dict(_conninfo(url))
    return {name: value for name, value in NETWORK_FAILURE_OPTIONS.items() if name not in given}


def _peewee_database(url: str) -> PostgresqlDatabase:
    return PostgresqlDatabase(_conninfo(url), prefer_psycopg3=True, autoconnect=False,
                              connect_timeout=CONNECT_TIMEOUT_SECONDS,
                              application_name="shellexec-server",
                              **network_failure_options(url))


class PostgresDatabase(Database):
    """`Database` on a PostgreSQL server shared with other replicas."""

    single_writer = False

    def __init__(self, db: PostgresqlDatabase, url: str, pool_size: int) -> None:
        super().__init__(db, readers=max(1, pool_size - 1))
        self.url = url
        self._pg = db
        self._write_timeouts = (f"{round(WRITE_LOCK_TIMEOUT_SECONDS * 1000)}ms",
                                f"{round(WRITE_IDLE_TIMEOUT_SECONDS * 1000)}ms")
        # Sessions whose rows another transaction held past the lock timeout, until a
        # NOWAIT lock finds them free (writer thread only).
        self._held: set[str] = set()
        # This process among the replicas: its own notices are not news to it.
        self.replica = os.urandom(6).hex()
        # Set when a pipelined transaction failed: the writer's next transaction starts on a
        # new connection (see `_transaction`).
        self._renew_connection = False

    def readiness_problem(self) -> str | None:
        return postgres_readiness_problem(self._pg)

    def close(self) -> None:
        """Closes the writer thread's own connection too (peewee keeps one per thread;
        SQLite's writes use the loop thread's), then every other one."""
        self._committer.submit(self._close_thread_connection).result()
        super().close()

    def _close_thread_connection(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    def file_bytes(self) -> int:
        """The size of the database on the server, in bytes (0 when it cannot be asked)."""
        try:
            self._ensure_connected()
            size = Select(columns=[fn.pg_database_size(fn.current_database())]).bind(
                self.db).scalar()
        except _CONNECTION_ERRORS:
            self._discard_connection()
            return 0
        return int(size or 0)

    def _discard_connection(self) -> None:
        """Drops this thread's connection (broken or not) so the next use connects anew."""
        with contextlib.suppress(Exception):
            connection = self._driver_connection()
            if connection is not None:
                connection.close()
        self.db.dispose()  # forgets the connection without talking to the server

    def _driver_connection(self) -> psycopg.Connection[Any] | None:
        """This thread's psycopg connection, None when it has none open."""
        if self.db.is_closed():
            return None
        connection: psycopg.Connection[Any] = self.db.connection()  # type: ignore[no-untyped-call]
        return connection

    def _broken(self) -> bool:
        connection = self._driver_connection()
        return connection is None or connection.closed or connection.broken

    async def _run_group(self, group: list[Job]) -> list[Outcome]:
        return await asyncio.get_running_loop().run_in_executor(
            self._committer, self._group_on_writer, group)

    def _group_on_writer(self, group: list[Job]) -> list[Outcome]:
        in_group = {session for _, _, session in group}
        held = {session for session in sorted(self._held.intersection(in_group))
                if self._still_held(session)}
        refused: list[Outcome] = [(future, None, self._held_error())
                                  for _, future, session in group if session in held]
        group = [job for job in group if job[2] not in held]
        if not group:
            return refused
        sessions = {session for _, _, session in group if session is not None}
        try:
            outcomes = self._transaction_renewing_a_lost_connection(lambda: [
                (future, work(), None) for work, future, _ in group], sessions)
            self._room_again()
            return refused + outcomes
        except DatabaseUnavailableError as error:  # the COMMIT's outcome is unknown
            return refused + [(future, None, error) for _, future, _ in group]
        except Exception as error:
            if self._lost(error):
                return refused + [(future, None, DatabaseUnavailableError())
                                  for _, future, _ in group]
            if _lock_not_available(error):
                # The group waited the lock timeout for one of its sessions, and the statement
                # does not say which: ask each, briefly, or the first unit of the held one
                # would wait the whole timeout again, alone.
                wait = min(HELD_PROBE_SECONDS, WRITE_LOCK_TIMEOUT_SECONDS)
                for session in sorted(sessions):
                    if self._still_held(session, wait):
                        self._note_held(session)
        # As on SQLite: rather than pay a savepoint per unit, run each unit again alone (a
        # deadlock with another replica's group lands here too, and is rare: groups lock
        # their sessions in one order). A session found held by another transaction fails
        # the rest of its units at once: each would wait the whole lock timeout again.
        return refused + [self._alone(job) if job[2] not in self._held
                          else (job[1], None, self._held_error()) for job in group]

    def _note_held(self, session_id: str) -> None:
        if len(self._held) >= MAX_HELD_SESSIONS:  # a session never written again stays
            self._held.clear()  # noted: forget them all, and wait again
        self._held.add(session_id)

    def _still_held(self, session_id: str, wait: float = 0.0) -> bool:
        """Whether a session whose rows another transaction held past the lock timeout is
        held still: asked without waiting (NOWAIT), or waiting at most `wait` seconds, so that
        the writer does not wait the lock timeout again for every group while a stopped
        replica holds it."""
        try:
            self._connect_writer()
            with self.db.atomic():
                if wait:
                    Select(columns=[fn.set_config("lock_timeout", f"{round(wait * 1000)}ms",
                                                  True)]).bind(self.db).scalar()
                Session.select(Session.id).where(Session.id == session_id).for_update(
                    nowait=not wait).execute()
        except Exception as error:
            if _lock_not_available(error):
                return True
            self._lost(error)  # the group that follows meets it too, and says so
            return False
        self._held.discard(session_id)
        return False

    def _held_error(self) -> DatabaseUnavailableError:
        return DatabaseUnavailableError(
            "another replica's transaction holds the session's rows and did not end in "
            f"{self._write_timeouts[0]}")

    def _alone(self, job: Job) -> Outcome:
        work, future, session = job
        try:
            value = self._transaction(work, set() if session is None else {session})
        except DatabaseUnavailableError as error:
            return future, None, error
        except Exception as error:
            if _lock_not_available(error):
                if session is not None:
                    self._note_held(session)
                return future, None, self._held_error()
            self._lost(error)
            if self._broken():
                return future, None, DatabaseUnavailableError()
            return future, None, self._stored_nothing(error)
        self._room_again()
        return future, value, None

    def _disk_full(self, error: BaseException) -> bool:
        """Whether `error` is PostgreSQL's "could not extend file" or another of its
        disk-full errors (SQLSTATE 53100), raised by a statement: the transaction stored
        nothing."""
        return any(isinstance(found, psycopg.errors.DiskFull)
                   for found in driver_errors(error))

    def _transaction_renewing_a_lost_connection(self, work: Callable[[], T],
                                                sessions: set[str]) -> T:
        """`_transaction`, run again once on a new connection when the writer's connection,
        opened before it, turns out to be lost before COMMIT was sent: a connection left idle
        through a database restart fails its first use, and nothing of it was stored (the
        caches were cleared as for any rollback). A COMMIT whose outcome is unknown is never
        run again."""
        reused = not self.db.is_closed() and not self._renew_connection
        try:
            return self._transaction(work, sessions)
        except DatabaseUnavailableError:
            raise
        except Exception as error:
            if not (reused and self._lost(error)):
                raise
        return self._transaction(work, sessions)

    def _connect_writer(self) -> None:
        if self._renew_connection:
            # The server skips what a pipeline sends after a refused statement, and the
            # driver still counts a statement it asked to prepare there as prepared; a new
            # connection remembers none (ADR 0138).
            self._renew_connection = False
            self._discard_connection()
        self._ensure_connected()

    def _transaction(self, work: Callable[[], T], sessions: set[str]) -> T:
        self._connect_writer()
        connection = self.db.connection()  # type: ignore[no-untyped-call]
        committing = False
        try:
            # Pipelined (ADR 0138): the statements go out without waiting for each result;
            # the driver waits only where a result is read, `verify` waits for the rest and
            # checks the rows they changed, and leaving the pipeline waits for COMMIT's.
            with connection.pipeline() as pipeline, self.statements.pipelined(pipeline):
                try:
                    connection.execute("BEGIN")
                    # For this transaction only: a migration's wait for its lock is not bounded.
                    connection.execute(
                        "SELECT set_config('lock_timeout', %s, true), "
                        "set_config('idle_in_transaction_session_timeout', %s, true)",
                        self._write_timeouts)
                    self.statements.begin()
                    self.statements.lock_sessions(sessions)
                    value = work()
                    self._notify_feed()
                    self.statements.verify()
                    committing = True
                    connection.execute("COMMIT")
                except BaseException:
                    # A refused statement may be reported only now, or not yet: after any
                    # failure, the pipeline is drained and the connection renewed.
                    self._renew_connection = True
                    _drain(pipeline)
                    raise
            self.statements.committed()
            return value
        except BaseException as error:
            if committing and not isinstance(error, _ROLLED_BACK):
                self._forget_transaction()  # no ROLLBACK: the connection is done with
                raise self._commit_outcome_unknown(error) from error
            self._roll_back_writer(connection)
            raise

    def _commit_outcome_unknown(self, error: BaseException) -> DatabaseUnavailableError:
        """What a failure after COMMIT was sent becomes. Every statement before it had
        answered (`verify`), so the failure is COMMIT's own or the connection's, and the
        transaction may have committed: the driver can raise as it leaves the pipeline
        (`cannot exit pipeline mode while busy`) after the server committed, before it marks
        the connection broken. Running the units again would apply them twice; their callers
        hear UNAVAILABLE instead, and retry with their sequence or request id. The connection
        is not used again."""
        self._renew_connection = True
        return DatabaseUnavailableError(
            f"the connection failed while committing, so whether the write was stored is "
            f"unknown: {error}", outcome_unknown=True)

    def _notify_feed(self) -> None:
        """Tells the other replicas which sessions' feeds this transaction moved (delivered
        when, and only if, it commits; ADR 0071)."""
        for session_id, revision in self.statements.announced.items():
            self.statements.notify(CHANNEL, FeedNotice(self.replica, session_id,
                                                       revision).payload())
        for session_id in sorted(self.statements.deleted):
            self.statements.notify(CHANNEL, FeedNotice(self.replica, session_id, 0,
                                                       deleted=True).payload())

    def listener(self, on_notice: Callable[[FeedNotice], None],
                 on_reconnect: Callable[[], None]) -> FeedListener:
        """A listener for the other replicas' notices (started by the server)."""
        return FeedListener(self.url, self.replica, on_notice, on_reconnect,
                            network_failure_options(self.url))

    def _roll_back_writer(self, connection: Any) -> None:
        if not self._broken():
            with contextlib.suppress(*_CONNECTION_ERRORS):
                connection.execute("ROLLBACK")
        self._forget_transaction()

    def _forget_transaction(self) -> None:
        """Clears what was remembered of a transaction that did not commit, or may not have
        (the caches registered as rollback listeners)."""
        for listener in self._rollback_listeners:
            listener()

    def _lost(self, error: BaseException) -> bool:
        """Whether `error` came from a connection that is gone, or whose prepared statements
        a schema change made stale (`_stale_plan`); if so, it is dropped. Either way the work
        stored nothing, and runs on a new connection."""
        gone = isinstance(error, _CONNECTION_ERRORS) and (self.db.is_closed() or self._broken())
        if gone or _stale_plan(error):
            self._discard_connection()
            return True
        return False

    def _read(self, work: Callable[[], T]) -> T:
        if self.db.is_closed():
            return self._read_once(work)
        try:
            return self._read_once(work)
        except DatabaseUnavailableError:
            # This thread's connection, opened before, is lost: most likely it sat idle
            # through a database restart, and this read is its first use since; or its
            # prepared statements went stale in a migration. A read is safe to run again,
            # once, on a new connection.
            return self._read_once(work)

    def _read_once(self, work: Callable[[], T]) -> T:
        try:
            self._ensure_connected()
            # One snapshot for the whole read, as a WAL reader has in SQLite.
            with self.db.atomic(isolation_level="REPEATABLE READ"):
                return work()
        except Exception as error:
            if self._lost(error):
                raise DatabaseUnavailableError(
                    str(error) if _stale_plan(error) else "") from error
            raise


def open_postgres(url: str, pool_size: int = DEFAULT_POOL_SIZE,
                  upgrade: bool = True) -> PostgresDatabase:
    """Connects to the PostgreSQL database named by `url` and migrates it (replicas starting
    together take turns: the first migrates, the others find it done). Without `upgrade` an
    older database is OlderSchemaError (`migrate`)."""
    db = _peewee_database(url)
    db.bind(ALL_MODELS)
    try:
        db.connect()
    except _CONNECTION_ERRORS as error:
        raise DatabaseUnavailableError(str(error)) from error
    try:
        with db.atomic():
            Select(columns=[fn.pg_advisory_xact_lock(MIGRATION_LOCK)]).bind(db).scalar()
            migrate(db, upgrade)
    finally:
        db.close()
    return PostgresDatabase(db, url, pool_size)

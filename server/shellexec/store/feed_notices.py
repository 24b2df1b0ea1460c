"""PostgreSQL's LISTEN/NOTIFY as the wake-up call of the feed across replicas (ADR 0071).

A group that logged feed events notifies, inside its transaction, one small notice per session:
which replica wrote it, the session and its latest revision. PostgreSQL delivers notices
only once their transaction commits, so a notice never announces what a crash could undo.
Each replica listens on its own connection, on a thread of its own, and hands every notice of
another replica to the event loop. The notice carries no event: the event table is the log,
and a lost notice (a listener reconnecting) costs latency, never an event; after reconnecting
the listener says so, and every watcher of the replica replays from the log.

LISTEN and NOTIFY are PostgreSQL's own: peewee has no words for them (NOTIFY is sent as the
function `pg_notify`, LISTEN as the one statement of its kind here).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg

CHANNEL = "shellexec_feed"
# Seconds between attempts to connect again after the listening connection broke, and the
# longest the listener waits for a notice before it checks whether it should stop.
RECONNECT_SECONDS = 0.5
POLL_SECONDS = 0.5


# The third word of a notice that a session was deleted, in place of a revision.
_DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class FeedNotice:
    """A session's feed reached `revision` through replica `replica`, or, `deleted`, the
    session was deleted there (its watchers everywhere hear `session_deleted`)."""

    replica: str
    session_id: str
    revision: int
    deleted: bool = False

    def payload(self) -> str:
        return f"{self.replica} {self.session_id} {_DELETED if self.deleted else self.revision}"

    @classmethod
    def parse(cls, payload: str) -> FeedNotice | None:
        parts = payload.split(" ")
        if len(parts) != 3:
            return None
        if parts[2] == _DELETED:
            return cls(parts[0], parts[1], 0, deleted=True)
        if not parts[2].isdigit():
            return None
        return cls(parts[0], parts[1], int(parts[2]))


class FeedListener:
    """Listens for the notices of other replicas and passes them to the loop."""

    def __init__(self, url: str, replica: str, on_notice: Callable[[FeedNotice], None],
                 on_reconnect: Callable[[], None],
                 options: Mapping[str, Any] | None = None) -> None:
        self._url = url
        # libpq settings (`postgres.network_failure_options`): a listener whose server left
        # the network notices it, and connects again, instead of hearing nothing for ever.
        self._options = dict(options or {})
        self._replica = replica
        self._on_notice = on_notice
        self._on_reconnect = on_reconnect
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.connected = threading.Event()

    def start(self) -> None:
        """Starts listening (call it on the event loop the callbacks run on)."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="feed-listener", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        first = True
        while not self._stopping.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=3,
                                     **self._options) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    self.connected.set()
                    if not first:  # notices may have been missed meanwhile
                        self._hand_over(self._on_reconnect)
                    first = False
                    self._listen(connection)
            except psycopg.Error:
                self.connected.clear()
                self._stopping.wait(RECONNECT_SECONDS)

    def _listen(self, connection: psycopg.Connection[object]) -> None:
        while not self._stopping.is_set():
            for notify in connection.notifies(timeout=POLL_SECONDS):
                notice = FeedNotice.parse(notify.payload)
                if notice is not None and notice.replica != self._replica:
                    self._hand_over(functools.partial(self._on_notice, notice))

    def _hand_over(self, callback: Callable[[], None]) -> None:
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the server stopped
                self._loop.call_soon_threadsafe(callback)

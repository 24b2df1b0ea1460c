"""Events other replicas committed, handed to this replica's watchers (ADR 0071).

A notice (`store.feed_notices`) says that a session's feed reached a revision through another
replica. If this replica has watchers of the session and has not broadcast that revision, the
relay reads the events it has not broadcast from the log, once for all the session's watchers,
and broadcasts them as a local publish would. Watchers keep their own rules: a gap or a lag
sends one back to the log, so the relay can only make delivery faster, never wrong. A notice
that another replica deleted the session ends the watchers here with `session_deleted`, as
the deleting replica ends its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from shellexec.feed import FeedEvent, FeedHub
from shellexec.store import StoreError
from shellexec.store.feed_notices import FeedNotice
from shellexec.vocabulary import EVENT_SESSION_DELETED

# The next logged events of a session after a revision, oldest first (one bounded read).
LoggedEvents = Callable[[str, int], Awaitable[list[FeedEvent]]]

_log = logging.getLogger(__name__)


class FeedRelay:
    """Broadcasts the events of other replicas' notices, one reader per session at a time."""

    def __init__(self, feed: FeedHub, logged_events: LoggedEvents) -> None:
        self._feed = feed
        self._logged_events = logged_events
        # The highest revision noticed per session, and the task catching up on it.
        self._wanted: dict[str, int] = {}
        self._catching_up: dict[str, asyncio.Task[None]] = {}

    def notice(self, notice: FeedNotice) -> None:
        """Takes a notice of another replica (on the loop)."""
        session_id = notice.session_id
        if not self._feed.watched(session_id):
            return
        if notice.deleted:
            self._feed.finish(session_id, EVENT_SESSION_DELETED)
            return
        latest = self._feed.latest(session_id)
        if latest is not None and notice.revision <= latest:
            return
        self._wanted[session_id] = max(notice.revision, self._wanted.get(session_id, 0))
        if session_id not in self._catching_up:
            self._catching_up[session_id] = asyncio.create_task(self._catch_up(session_id))

    def reconnected(self) -> None:
        """The notices were interrupted: every watcher replays from the log."""
        self._feed.wake_all()

    async def _catch_up(self, session_id: str) -> None:
        try:
            while self._feed.watched(session_id):
                wanted = self._wanted[session_id]
                latest = self._feed.latest(session_id)
                after = wanted - 1 if latest is None else latest
                if after >= wanted:
                    return
                events = await self._logged_events(session_id, after)
                if not events:
                    return
                for event in events:
                    self._feed.broadcast(session_id, event)
        except StoreError as error:  # the database is away: watchers replay on heartbeat
            _log.warning("feed relay stopped for a session: %s", type(error).__name__)
        finally:
            del self._catching_up[session_id]
            self._wanted.pop(session_id, None)

    async def close(self) -> None:
        for task in list(self._catching_up.values()):
            task.cancel()
        await asyncio.gather(*self._catching_up.values(), return_exceptions=True)

"""Use cases that only read: list, shell output, boot state, and the feed."""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator

from shellexec import normalize
from shellexec.feed import FeedEvent, FeedHub
from shellexec.feed.stream import follow
from shellexec.normalize import ShellOutput
from shellexec.projection import Masking, MessageView, TurnView, project_message
from shellexec.rules.limits import BOOT_STATE_MESSAGES, MAX_PAGE_BYTES
from shellexec.service.access import UNRESTRICTED, Caller
from shellexec.service.errors import InvalidArgumentError, NotFoundError
from shellexec.service.records import (
    BootStateRecord,
    MessagePage,
    SessionRecord,
    ShellOutputRecord,
)
from shellexec.service.sessions import require_session, session_record
from shellexec.store import Database, queries
from shellexec.store.models import Message
from shellexec.store.tokens import token_is_active
from shellexec.vocabulary import (
    EVENT_END_OF_STREAM,
    EVENT_RESET,
    EVENT_SESSION_DELETED,
    REASON_REVISION_AHEAD,
    RESOURCE_MESSAGE,
    RESOURCE_TASK,
)


def _weight(row: Message) -> int:
    """About how many bytes a message takes in a response (1 KiB for its fixed fields)."""
    return 1024 + len(row.content) + len(row.command) + len(row.title) + len(row.work_dir)


def _fitting(rows: list[Message]) -> list[Message]:
    """The longest prefix of `rows` within MAX_PAGE_BYTES (never empty when rows is not)."""
    total = 0
    for index, row in enumerate(rows):
        total += _weight(row)
        if total > MAX_PAGE_BYTES and index > 0:
            return rows[:index]
    return rows


def _turns_of(session_id: str, messages: tuple[MessageView, ...]) -> tuple[TurnView, ...]:
    """The turns these messages belong to, and the session's running turn (ADR 0090)."""
    turn_ids = {view.turn_id for view in messages if view.turn_id}
    return tuple(TurnView.of(row) for row in queries.turns_of(session_id, turn_ids))


def _cursor_position(session_id: str, field: str, message_id: str) -> int | None:
    if not message_id:
        return None
    position = queries.message_position(session_id, message_id)
    if position is None:
        raise NotFoundError(f"message ({field})", message_id, RESOURCE_MESSAGE)
    return position


def _retained(position: int, stream: str) -> str | None:
    """A stream's retained text: its stored chunks hold more than the bound until they are
    compacted, and the text the fold kept is the newest bytes of them all (ADR 0019)."""
    stored = queries.read_stream(position, stream)
    return None if stored is None else normalize.bound_tail(stored)[0]


def _stored_output(row: Message) -> ShellOutput:
    """A shell message's output from its summary columns and stored chunks, without
    rebuilding its fold state."""
    position = int(row.position)
    return ShellOutput(exit_code=row.exit_code, stdout=_retained(position, "stdout"),
                       stderr=_retained(position, "stderr"), truncated=bool(row.truncated))


class Reader:
    """Serves stored messages and the live feed."""

    def __init__(self, database: Database, feed: FeedHub, heartbeat_seconds: float,
                 stream_lifetime_seconds: float, *, masking: Masking) -> None:
        self._database = database
        self._masking = masking
        self._feed = feed
        self._heartbeat = heartbeat_seconds
        self._lifetime = stream_lifetime_seconds

    async def list_messages(self, session_id: str, size: int, before: str, after: str,
                            descending: bool, *, caller: Caller = UNRESTRICTED) -> MessagePage:
        """At most `size` messages after or before a cursor (not both), in order."""
        def work() -> MessagePage:
            require_session(session_id, caller)
            rows = queries.page_of_messages(
                session_id, size + 1, descending=descending,
                before=_cursor_position(session_id, "before", before),
                after=_cursor_position(session_id, "after", after))
            fitting = _fitting(rows[:size])
            page = tuple(project_message(row, self._masking) for row in fitting)
            return MessagePage(page, queries.count_messages(session_id),
                               len(rows) > len(fitting), page[-1].id if page else "",
                               _turns_of(session_id, page))

        return await self._database.read(work)

    async def shell_output(self, session_id: str, message_id: str, *,
                           caller: Caller = UNRESTRICTED) -> ShellOutputRecord:
        def work() -> ShellOutputRecord:
            row = queries.find_shell_message(session_id, message_id)
            # One answer for missing, other-session, other-task and non-shell messages alike.
            if row is None or not caller.sees(str(row.task_id)):
                raise NotFoundError("shell message", message_id, RESOURCE_MESSAGE)
            return ShellOutputRecord(row.id, row.status, int(row.updated_at),
                                     self._masking.output(_stored_output(row)))

        return await self._database.read(work)

    async def boot_state(self, task_id: str, *,
                         caller: Caller = UNRESTRICTED) -> BootStateRecord:
        def work() -> BootStateRecord:
            session = queries.latest_session_of_task(task_id) if caller.sees(task_id) else None
            if session is None:
                raise NotFoundError("task", task_id, RESOURCE_TASK)
            rows = _fitting(queries.page_of_messages(session.id, BOOT_STATE_MESSAGES,
                                                     descending=True))
            record = SessionRecord.of(session, int(session.revision),
                                      queries.current_turn_id(session.id))
            messages = tuple(project_message(row, self._masking) for row in reversed(rows))
            return BootStateRecord(record, messages, queries.task_state(task_id),
                                   _turns_of(session.id, messages))

        return await self._database.read(work)

    def _events_after(self, session_id: str, after: int, limit: int) -> list[FeedEvent]:
        found = [FeedEvent(event_type, revision, project_message(row, self._masking))
                 for revision, event_type, row in queries.events_after(session_id, after, limit)]
        found += [FeedEvent(event_type, revision, turn=TurnView.of(row))
                  for revision, event_type, row in queries.turn_events_after(
                      session_id, after, limit)]
        # Each query returned its first `limit`: together, the first `limit` of both.
        return sorted(found, key=lambda event: event.revision)[:limit]

    async def logged_events(self, session_id: str, after: int, limit: int) -> list[FeedEvent]:
        """Up to `limit` logged events of the session after revision `after`, oldest first
        (what `FeedRelay` hands this replica's watchers)."""
        return await self._database.read(
            functools.partial(self._events_after, session_id, after, limit))

    async def watch(self, session_id: str, since_revision: int | None, *,
                    caller: Caller = UNRESTRICTED) -> AsyncGenerator[FeedEvent, None]:
        """Checks the session, then returns its event stream (errors surface before the first
        event, so a browser gets a proper 404/400)."""
        subscription = self._feed.subscribe(session_id)
        try:
            session = await self._database.read(lambda: session_record(session_id, caller))
            if since_revision is not None and since_revision > session.revision:
                raise InvalidArgumentError(
                    "since_revision",
                    f"is ahead of the session's latest revision {session.revision}",
                    REASON_REVISION_AHEAD)
        except BaseException:
            self._feed.unsubscribe(session_id, subscription)
            raise
        start = session.revision if since_revision is None else since_revision

        def events_or_reset(after: int, limit: int) -> list[FeedEvent]:
            # A token revoked since the stream opened (by `shellexec token revoke`, in
            # another process) ends it at the next replay; reconnecting then answers 401.
            if caller.name and not token_is_active(caller.name):
                return [FeedEvent(EVENT_END_OF_STREAM, after)]
            point = queries.compaction_point(session_id)
            if point is None:  # deleted, and this replica's hub was not told (a lost notice)
                return [FeedEvent(EVENT_SESSION_DELETED, after)]
            compacted, latest = point
            if after < compacted:  # the events after `after` are gone: start over
                return [FeedEvent(EVENT_RESET, latest)]
            return self._events_after(session_id, after, limit)

        async def read_events(after: int, limit: int) -> list[FeedEvent]:
            return await self._database.read(functools.partial(events_or_reset, after, limit))

        return follow(self._feed, session_id, subscription, start, read_events,
                      heartbeat_seconds=self._heartbeat, lifetime_seconds=self._lifetime)

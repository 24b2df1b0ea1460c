"""Use cases that only read: list, shell output, boot state, and the feed."""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Iterator, Sequence

from shellexec import normalize
from shellexec.feed import FeedEvent, FeedHub, WatcherBoundError
from shellexec.feed.hub import event_weight
from shellexec.feed.stream import LogBatch, follow
from shellexec.normalize import ShellOutput
from shellexec.projection import Masking, MessageView, TurnView, project_message
from shellexec.projection.weight import FIXED_WEIGHT, fitting, message_weight
from shellexec.rules.limits import (
    BOOT_STATE_MESSAGES,
    MAX_PAGE_BYTES,
    REPLAY_BATCH_BYTES,
    REPLAY_BATCH_EVENTS,
)
from shellexec.service.access import UNRESTRICTED, Caller
from shellexec.service.errors import InvalidArgumentError, NotFoundError, ResourceExhaustedError
from shellexec.service.records import (
    BootStateRecord,
    MessagePage,
    SessionRecord,
    ShellOutputRecord,
)
from shellexec.service.replay_pacing import ReplayPace
from shellexec.service.sessions import require_session, session_record
from shellexec.store import Database, queries
from shellexec.store.models import Message
from shellexec.store.queries import EventHead
from shellexec.store.tokens import token_is_active
from shellexec.vocabulary import (
    EVENT_END_OF_STREAM,
    EVENT_RESET,
    EVENT_SESSION_DELETED,
    REASON_REVISION_AHEAD,
    REASON_TOO_MANY_WATCHERS,
    RESOURCE_MESSAGE,
    RESOURCE_TASK,
    as_shell_status,
    is_terminal,
)


def _page(session_id: str, size: int, *, descending: bool, before: int | None = None,
          after: int | None = None) -> tuple[list[Message], bool]:
    """Up to `size` summary rows in page order, as many as fit in MAX_PAGE_BYTES (at least
    one), and whether more follow. The texts are weighed by the store before any is read, so
    a page of long commands costs its bound, not its count, in memory (ADR 0133)."""
    weights = queries.page_weights(session_id, size + 1, descending=descending,
                                   before=before, after=after)
    count = fitting(map(message_weight, weights[:size]), MAX_PAGE_BYTES)
    # The read's snapshot holds the same messages for the second query as for the first.
    rows = queries.page_of_messages(session_id, count, descending=descending,
                                    before=before, after=after) if count else []
    return rows, len(weights) > count


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


def _message_positions(heads: Sequence[EventHead]) -> set[int]:
    return {head.message_position for head in heads if head.turn_id is None}


def _within_budget(heads: Sequence[EventHead]) -> Sequence[EventHead]:
    """The leading `heads` whose messages fit in REPLAY_BATCH_BYTES together (at least one).
    A message's texts count at its first event only, since the batch's events share one view
    of it; the others count the fixed part. One message always fits, so it is not weighed."""
    positions = _message_positions(heads)
    if len(positions) <= 1:
        return heads
    text_bytes = queries.text_bytes_at(positions)
    weighed: set[int] = set()

    def weights() -> Iterator[int]:
        for head in heads:
            position = head.message_position
            if head.turn_id is not None or position in weighed:
                yield FIXED_WEIGHT
            else:
                weighed.add(position)
                yield message_weight(text_bytes.get(position, 0))

    return heads[:fitting(weights(), REPLAY_BATCH_BYTES)]


def _event(head: EventHead, views: dict[int, MessageView],
           turns: dict[str, TurnView]) -> FeedEvent | None:
    """The event `head` names, or None when the row it carries is gone (as a join skips it)."""
    if head.turn_id is not None:
        turn = turns.get(head.turn_id)
        return None if turn is None else FeedEvent(head.type, head.revision, turn=turn)
    view = views.get(head.message_position)
    return None if view is None else FeedEvent(head.type, head.revision, view)


class Reader:
    """Serves stored messages and the live feed."""

    def __init__(self, database: Database, feed: FeedHub, heartbeat_seconds: float,
                 stream_lifetime_seconds: float, *, masking: Masking,
                 replay_pace: ReplayPace) -> None:
        self._database = database
        self._masking = masking
        self._replay_pace = replay_pace
        self._feed = feed
        self._heartbeat = heartbeat_seconds
        self._lifetime = stream_lifetime_seconds

    async def list_messages(self, session_id: str, size: int, before: str, after: str,
                            descending: bool, *, caller: Caller = UNRESTRICTED) -> MessagePage:
        """At most `size` messages after or before a cursor (not both), in order."""
        def work() -> MessagePage:
            require_session(session_id, caller)
            rows, has_more = _page(session_id, size, descending=descending,
                                   before=_cursor_position(session_id, "before", before),
                                   after=_cursor_position(session_id, "after", after))
            page = tuple(project_message(row, self._masking) for row in rows)
            return MessagePage(page, queries.count_messages(session_id), has_more,
                               page[-1].id if page else "", _turns_of(session_id, page))

        return await self._database.read(work)

    async def shell_output(self, session_id: str, message_id: str, *,
                           caller: Caller = UNRESTRICTED) -> ShellOutputRecord:
        def work() -> ShellOutputRecord:
            row = queries.find_shell_message(session_id, message_id)
            # One answer for missing, other-session, other-task and non-shell messages alike.
            if row is None or not caller.sees(str(row.task_id)):
                raise NotFoundError("shell message", message_id, RESOURCE_MESSAGE)
            return ShellOutputRecord(row.id, row.status, int(row.updated_at),
                                     self._masking.output(
                                         _stored_output(row),
                                         finished=is_terminal(as_shell_status(row.status))))

        return await self._database.read(work)

    async def boot_state(self, task_id: str, *,
                         caller: Caller = UNRESTRICTED) -> BootStateRecord:
        def work() -> BootStateRecord:
            session = queries.latest_session_of_task(task_id) if caller.sees(task_id) else None
            if session is None:
                raise NotFoundError("task", task_id, RESOURCE_TASK)
            rows, _ = _page(session.id, BOOT_STATE_MESSAGES, descending=True)
            record = SessionRecord.of(session, int(session.revision),
                                      queries.current_turn_id(session.id))
            messages = tuple(project_message(row, self._masking) for row in reversed(rows))
            return BootStateRecord(record, messages, queries.task_state(task_id),
                                   _turns_of(session.id, messages))

        return await self._database.read(work)

    def _events_after(self, session_id: str, after: int) -> LogBatch:
        """The session's next logged events after revision `after`: at most
        REPLAY_BATCH_EVENTS, and as many as fit in REPLAY_BATCH_BYTES (at least one), each
        message read and projected once however many of the events carry it (ADR 0133)."""
        heads = queries.event_heads_after(session_id, after, REPLAY_BATCH_EVENTS + 1)
        kept = _within_budget(heads[:REPLAY_BATCH_EVENTS])
        rows = queries.messages_at(_message_positions(kept))
        views = {position: project_message(row, self._masking)
                 for position, row in rows.items()}
        turns = {turn_id: TurnView.of(row) for turn_id, row in queries.turns_with_ids(
            {head.turn_id for head in kept if head.turn_id is not None}).items()}
        events = [_event(head, views, turns) for head in kept]
        return LogBatch([event for event in events if event is not None],
                        more=len(heads) > len(kept),
                        reached=kept[-1].revision if kept else after)

    async def logged_events(self, session_id: str, after: int) -> list[FeedEvent]:
        """The session's next logged events after revision `after`, oldest first, bounded as
        a replay's are (what `FeedRelay` hands this replica's watchers)."""
        batch = await self._database.read(
            functools.partial(self._events_after, session_id, after))
        return list(batch.events)

    async def watch(self, session_id: str, since_revision: int | None, *,
                    caller: Caller = UNRESTRICTED) -> AsyncGenerator[FeedEvent, None]:
        """Checks the session, then returns its event stream (errors surface before the first
        event, so a browser gets a proper 404/400). A caller already holding as many open
        streams on this replica as it may is refused first, before anything is subscribed or
        read (ADR 0135); every caller is counted by its token's name."""
        try:
            subscription = self._feed.subscribe(session_id, caller.name)
        except WatcherBoundError as reached:
            raise ResourceExhaustedError(
                f"this caller already has {reached.bound} feeds open on this server, the most "
                "it may; close feeds it no longer reads, or watch fewer sessions",
                REASON_TOO_MANY_WATCHERS) from None
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

        def events_or_reset(after: int) -> LogBatch:
            # A token revoked since the stream opened (by `shellexec token revoke`, in
            # another process) ends it at the next replay; reconnecting then answers 401.
            if caller.name and not token_is_active(caller.name):
                return LogBatch([FeedEvent(EVENT_END_OF_STREAM, after)])
            point = queries.compaction_point(session_id)
            if point is None:  # deleted, and this replica's hub was not told (a lost notice)
                return LogBatch([FeedEvent(EVENT_SESSION_DELETED, after)])
            compacted, latest = point
            if after < compacted:  # the events after `after` are gone: start over
                return LogBatch([FeedEvent(EVENT_RESET, latest)])
            return self._events_after(session_id, after)

        reading_on = False  # whether the last batch said the log holds more

        async def read_events(after: int) -> LogBatch:
            # A token's watchers replaying a long log over and over made every other call
            # slow: what one caller's replays read and send is paced.
            nonlocal reading_on
            reserved = await self._replay_pace.reserve(caller.name, reading_on=reading_on)
            weight = None  # a read cancelled while its thread goes on is charged a batch
            try:
                batch = await self._database.read(functools.partial(events_or_reset, after))
                weight = sum(event_weight(event) for event in batch.events)
                reading_on = batch.more
                return batch
            finally:
                self._replay_pace.settle(caller.name, reserved, weight)

        return follow(self._feed, session_id, subscription, start, read_events,
                      heartbeat_seconds=self._heartbeat, lifetime_seconds=self._lifetime)

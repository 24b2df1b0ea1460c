"""Publishing one ACP `session/update`: fold, persist, then announce.

Each publish is one write transaction. The feed event is announced only after the commit, so
a watcher never sees what a crash could still undo.

With `mask_at_rest`, credential forms in an update are masked before it is folded, so nothing
stored (bodies, columns, fold state) or cached holds them; masking keeps byte lengths, so the
summary's byte counts are those of the text the agent sent (ADR 0059).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from shellexec import normalize
from shellexec.feed import FeedEvent, FeedHub
from shellexec.normalize import bounded_head
from shellexec.normalize.live_meta import goose_live_output
from shellexec.projection import Masking, project_message
from shellexec.projection.secrets import CONTEXT_BYTES, mask_continuation, mask_json
from shellexec.service import events, tool_calls, units
from shellexec.service.access import UNRESTRICTED, Caller
from shellexec.service.deps import Clock, IdFactory
from shellexec.service.errors import AlreadyExistsError, NotFoundError
from shellexec.service.known_sessions import SessionFacts
from shellexec.service.pacing import WriterPace
from shellexec.service.records import PublishResult
from shellexec.service.terminals import Terminals, masked_terminal_update
from shellexec.service.unit_caches import UnitCaches
from shellexec.store import Database, queries
from shellexec.store.models import Message
from shellexec.store.statements import StoredReceipt
from shellexec.vocabulary import (
    ACP_AGENT_MESSAGE_CHUNK,
    ACP_TERMINAL_UPDATES,
    ACP_TOOL_UPDATES,
    ACP_USER_MESSAGE_CHUNK,
    AUTHOR_AGENT,
    AUTHOR_USER,
    EVENT_MESSAGE_ADDED,
    EVENT_MESSAGE_UPDATED,
    MESSAGE_TEXT,
    REASON_SEQUENCE_CONFLICT,
    RESOURCE_SESSION,
    AcpChatChunk,
    AuthorType,
)

# Who wrote the text of each ACP chat chunk.
TEXT_AUTHORS: dict[AcpChatChunk, AuthorType] = {
    ACP_AGENT_MESSAGE_CHUNK: AUTHOR_AGENT, ACP_USER_MESSAGE_CHUNK: AUTHOR_USER}
# The fields of a tool update that name or classify it: never masked at rest.
_IDENTITY_FIELDS = frozenset({"sessionUpdate", "toolCallId", "status", "kind"})

# How much of an update's SHA-256 a receipt keeps: enough that two different updates under
# one sequence never look alike by chance, small beside the row (ADR 0060).
PAYLOAD_DIGEST_BYTES = 16

# (message row, event type) or None when the update type is ignored.
_Change = tuple[Message, str] | None

# What a committed publish did, as the publish counter labels it (docs/operations.md).
OUTCOME_STORED = "stored"
OUTCOME_DUPLICATE = "duplicate"
OUTCOME_IGNORED = "ignored"
PUBLISH_OUTCOMES = (OUTCOME_STORED, OUTCOME_DUPLICATE, OUTCOME_IGNORED)


def _outcome(result: PublishResult) -> str:
    if result.duplicate:
        return OUTCOME_DUPLICATE
    return OUTCOME_IGNORED if result.message is None else OUTCOME_STORED


def _uncounted(outcome: str) -> None:
    return None


def _masked_update(update: Mapping[str, Any], state: normalize.ShellState | None
                   ) -> dict[str, Any]:
    """`update` with its text masked as a continuation of the call's stdout so far (`state`;
    None for a new call), but Goose's live chunks, each a continuation of its own stream."""
    context = "" if state is None else mask_context(state)
    masked: dict[str, Any] = {key: value if key in _IDENTITY_FIELDS
                              else mask_json(value, context) for key, value in update.items()}
    if goose_live_output(update.get("_meta")) is not None:
        params = update["_meta"]["toolNotification"].get("params")
        masked_params: Any = masked["_meta"]["toolNotification"]["params"]
        if isinstance(params, Mapping):
            masked_params["chunks"] = _masked_live_chunks(params, state)
    return masked


def _masked_live_chunks(params: Mapping[str, Any], state: normalize.ShellState | None
                        ) -> object:
    """Goose's `live_output` chunks masked in order, each as a continuation of what its own
    stream holds so far: a token split across two stderr chunks was masked against stdout's
    end, and the rest stored in clear."""
    chunks = params.get("chunks")
    if not isinstance(chunks, list):
        return mask_json(chunks)
    ends = {"stdout": "", "stderr": ""}
    if state is not None:
        ends = {stream: "" if text is None else text.tail(CONTEXT_BYTES)
                for stream, text in (("stdout", state.stdout), ("stderr", state.stderr))}
    masked: list[object] = []
    for chunk in chunks:
        stream = chunk.get("stream") if isinstance(chunk, Mapping) else None
        if not isinstance(stream, str) or stream not in ends or not isinstance(
                chunk.get("output"), str):
            masked.append(mask_json(chunk))
            continue
        output = mask_continuation(ends[stream], chunk["output"])
        ends[stream] = (ends[stream] + output)[-CONTEXT_BYTES:]
        masked.append({key: output if key == "output" else mask_json(value)
                       for key, value in chunk.items()})
    return masked


def payload_digest(update: Mapping[str, Any]) -> bytes:
    """The first PAYLOAD_DIGEST_BYTES bytes of the SHA-256 of the update's canonical JSON
    (sorted keys, no spaces, UTF-8, -0.0 written as 0.0), so equal updates match however
    their keys were ordered and whichever door they came through."""
    canonical = _canonical_json(update)
    if "-0.0" in canonical:  # rare, and maybe only inside a string: then walk the values
        canonical = _canonical_json(_without_negative_zero(update))
    return hashlib.sha256(canonical.encode()).digest()[:PAYLOAD_DIGEST_BYTES]


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_negative_zero(value: Any) -> Any:
    """`value` with every -0.0 made 0.0: the same JSON number, which REST cannot tell apart
    and gRPC can (a `google.protobuf.Value` holds the double as sent)."""
    if isinstance(value, float):
        return value + 0.0  # -0.0 + 0.0 is 0.0; every other float is unchanged
    if isinstance(value, Mapping):
        return {key: _without_negative_zero(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_negative_zero(item) for item in value]
    return value


def _chunk_text(update: Mapping[str, Any]) -> str:
    content = update.get("content")
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return str(content["text"])
    return ""


def mask_context(state: normalize.ShellState) -> str:
    """The end of a call's stdout that an update continuing it is masked with at rest: the
    rest of a token whose start it holds is masked too."""
    return "" if state.stdout is None else state.stdout.tail(CONTEXT_BYTES)


class Publisher:
    """Stores ACP updates into messages."""

    def __init__(self, database: Database, feed: FeedHub, caches: UnitCaches, clock: Clock,
                 new_id: IdFactory, *, masking: Masking, mask_at_rest: bool,
                 on_outcome: Callable[[str], None] = _uncounted,
                 pace: WriterPace | None = None) -> None:
        self._database = database
        # What each caller's publishes may take of the writer (ADR 0148).
        self._pace = WriterPace() if pace is None else pace
        self._masking = masking
        self._mask_at_rest = mask_at_rest
        # Told each committed publish's outcome (one of PUBLISH_OUTCOMES): the metrics.
        self._on_outcome = on_outcome
        self._feed = feed
        self._states = caches.states
        self._known_sessions = caches.sessions
        self._clock = clock
        self._new_id = new_id

    async def publish(self, session_id: str, update: Mapping[str, Any],
                      sequence: int | None, *, caller: Caller = UNRESTRICTED) -> PublishResult:
        """Stores the update as one unit. Once the unit's outcome is known, the caller is
        charged what it took of the thread that ran it (every run of it: a group rolled back
        runs it again), and what it stored is announced; both even if the call was cancelled
        meanwhile, since the write goes on (`units.write`'s `committed`): a caller cancelling
        each of its calls would otherwise never be paced, and live watchers would miss the
        event."""
        turn = await self._pace.enter(caller.name)
        cost = [0.0]

        def work() -> tuple[PublishResult, FeedEvent | None]:
            started = time.thread_time()
            try:
                return self._publish(session_id, update, sequence, caller)
            finally:
                cost[0] += time.thread_time() - started

        def committed(stored: tuple[PublishResult, FeedEvent | None] | None) -> None:
            self._pace.leave(caller.name, cost[0], turn)
            if stored is None:
                return
            result, event = stored
            if event is not None:
                self._feed.broadcast(session_id, event)
            self._on_outcome(_outcome(result))

        result, _ = await units.write(self._database, work, session_id, committed=committed)
        if not caller.reads():
            # A write-only token (an agent's bridge) would otherwise read any session it
            # can name, a chunk at a time, through the answers (ADR 0050).
            return PublishResult(None, result.duplicate)
        return result

    def _publish(self, session_id: str, update: Mapping[str, Any], sequence: int | None,
                 caller: Caller) -> tuple[PublishResult, FeedEvent | None]:
        session = self._session(session_id)
        if not caller.sees(session.task_id):  # answers as a missing session (ADR 0050)
            raise NotFoundError("session", session_id, RESOURCE_SESSION)
        statements = self._database.statements
        digest = b""
        if sequence is not None:
            digest = payload_digest(update)
            receipt = statements.receipt(session_id, sequence)
            if receipt is not None:
                return self._replayed(sequence, receipt, digest), None
        change = self._apply(session, update)
        event = None
        if change is not None:
            row, event_type = change
            event = events.record(statements, session_id, event_type, row, self._masking)
        if sequence is not None:
            statements.insert_receipt(session_id, sequence,
                                      None if change is None else int(change[0].position),
                                      digest)
        return PublishResult(None if event is None else event.message, False), event

    def _session(self, session_id: str) -> SessionFacts:
        """The session's facts, remembered once found (see `KnownSessions`)."""
        if not self._database.statements.holds(session_id):  # gone, or deleted elsewhere
            raise NotFoundError("session", session_id, RESOURCE_SESSION)
        known = self._known_sessions.get(session_id)
        if known is not None:
            return known
        facts = self._database.statements.session_facts(session_id)
        if facts is None:
            raise NotFoundError("session", session_id, RESOURCE_SESSION)
        known = SessionFacts(session_id, *facts)
        self._known_sessions.put(known)
        return known

    def _replayed(self, sequence: int, receipt: StoredReceipt, digest: bytes) -> PublishResult:
        """The answer to a sequence already stored: a retry of the same update is a
        duplicate; another update under it is a conflict (receipts without a digest, from
        before step 4 of the migrations, are taken as the same update)."""
        if receipt.digest is not None and receipt.digest != digest:
            raise AlreadyExistsError(
                f"sequence: {sequence} was already published with another update; "
                "publish it under a new sequence", REASON_SEQUENCE_CONFLICT)
        position = receipt.position
        row = None if position is None else queries.get_message_by_position(position)
        return PublishResult(None if row is None else project_message(row, self._masking), True)

    def _apply(self, session: SessionFacts, update: Mapping[str, Any]) -> _Change:
        kind = update["sessionUpdate"]
        if kind in ACP_TOOL_UPDATES:
            return self._fold_tool_update(session, update)
        if kind in TEXT_AUTHORS:
            return self._append_text(session, TEXT_AUTHORS[kind], _chunk_text(update))
        if kind in ACP_TERMINAL_UPDATES:
            return self._fold_terminal_update(session, update)
        return None

    def _terminals(self) -> Terminals:
        return Terminals(self._database.statements, self._states)

    def _fold_terminal_update(self, session: SessionFacts, update: Mapping[str, Any]
                              ) -> _Change:
        """Folds a terminal update into its tool call, or holds it until one names its
        terminal (`service.terminals`)."""
        terminals = self._terminals()
        found = terminals.find(session.id, update)
        if found is None:
            terminals.hold(session.id, update if not self._mask_at_rest
                           else masked_terminal_update(update, ""))
            return None
        row, before, just_linked = found
        if self._mask_at_rest:
            update = masked_terminal_update(update, mask_context(before))
        state = before
        if just_linked:
            state, _ = terminals.release(session.id, before, [str(update["terminalId"])])
        tool_calls.save(self._database.statements, row, before, normalize.fold(state, update),
                        self._clock(), self._states)
        return row, EVENT_MESSAGE_UPDATED

    def _fold_tool_update(self, session: SessionFacts, update: Mapping[str, Any]) -> _Change:
        tool_call_id = str(update["toolCallId"])
        now = self._clock()
        statements = self._database.statements
        call = tool_calls.load_call(statements, session.id, tool_call_id, self._states)
        if call is None:
            if self._mask_at_rest:
                update = _masked_update(update, None)
            return self._insert_tool_call(session, tool_call_id, update, now), EVENT_MESSAGE_ADDED
        # A late update after its turn settled lands here too: it reconciles this message
        # and touches neither turns nor session or task state.
        row, before = call
        if self._mask_at_rest:
            update = _masked_update(update, before)
        after = normalize.fold(before, update)
        terminals = self._terminals()
        named = terminals.unlinked_refs(session.id, update)
        if named:
            after, named = terminals.release(session.id, after, named)
            terminals.link(session.id, named, int(row.position))
        tool_calls.save(statements, row, before, after, now, self._states)
        return row, EVENT_MESSAGE_UPDATED

    def _insert_tool_call(self, session: SessionFacts, tool_call_id: str,
                          update: Mapping[str, Any], now: int) -> Message:
        """Folds a tool call's first update, then inserts its row once with every column."""
        state = normalize.fold(normalize.new_state(agent=session.agent or None), update)
        terminals = self._terminals()
        state, linked = terminals.release(session.id, state,
                                          terminals.unlinked_refs(session.id, update),
                                          tool_call_id)
        turn = queries.running_turn(session.id)
        identity = {"id": self._new_id("msg"), "session": session.id, "task_id": session.task_id,
                    "turn_id": "" if turn is None else turn.id, "author_type": AUTHOR_AGENT,
                    "tool_call_id": tool_call_id}
        row = tool_calls.insert(self._database.statements, identity, state, now, self._states)
        terminals.link(session.id, linked, int(row.position))
        return row

    def _append_text(self, session: SessionFacts, author: AuthorType, text: str) -> _Change:
        """Appends a chat chunk to the author's latest text message of the current turn,
        so a streamed reply reads as one message."""
        if not text:
            return None
        now = self._clock()
        turn = queries.running_turn(session.id)
        turn_id = "" if turn is None else turn.id
        latest = queries.latest_message(session.id)
        continued = (latest if latest is not None and latest.type == MESSAGE_TEXT
                     and latest.author_type == author and latest.turn_id == turn_id else None)
        if self._mask_at_rest:
            text = mask_continuation("" if continued is None else continued.content, text)
        if continued is not None:
            continued.content = bounded_head(continued.content + text)
            continued.updated_at = now
            self._database.statements.update_message(
                int(continued.position), {"content": continued.content, "updated_at": now})
            return continued, EVENT_MESSAGE_UPDATED
        row = self._database.statements.insert_message({
            "id": self._new_id("msg"), "session": session.id, "task_id": session.task_id,
            "turn_id": turn_id, "author_type": author, "type": MESSAGE_TEXT,
            "content": bounded_head(text), "created_at": now, "updated_at": now})
        return row, EVENT_MESSAGE_ADDED

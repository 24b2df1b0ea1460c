"""One bridge run, start to finish.

1. Start the agent; `initialize` (advertising terminal output) and `session/new`.
2. Create the service session and start its turn (retried while the service is away).
3. Record the prompt as a `user_message_chunk`, send `session/prompt`, and let the forwarder
   publish every `session/update` as it arrives.
4. When the prompt returns (or is cancelled by a signal), stop the agent, wait until every
   update reached the service, and complete the turn with the agent's stop reason.

The agent starts before the service session is created so that an agent that cannot start
leaves no empty session behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from acp import text_block
from acp.schema import PromptResponse

from shellexec.bridge.agent import (
    AgentHandle,
    failure_reason,
    open_acp_session,
    running_agent,
)
from shellexec.bridge.child_exit import exited_within
from shellexec.bridge.environment import agent_environment
from shellexec.bridge.errors import (
    AgentError,
    BridgeError,
    ServiceRejectedError,
    SignalError,
    UsageError,
    refused_options,
)
from shellexec.bridge.files import FileAccess
from shellexec.bridge.forwarder import Forwarder
from shellexec.bridge.handlers import BridgeClient
from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.options import BridgeOptions
from shellexec.bridge.os_text import quoted_start
from shellexec.bridge.own_session import OwnSession
from shellexec.bridge.permission_calls import announced_call
from shellexec.bridge.service import ServiceLink, ServiceTurn
from shellexec.bridge.signals import Signals
from shellexec.bridge.terminals import TerminalHost
from shellexec.bridge.user_words import UserWords
from shellexec.bridge.waiting import noticing
from shellexec.vocabulary import (
    ACP_STOP_CANCELLED,
    ACP_USER_MESSAGE_CHUNK,
    REASON_SCOPE_MISSING,
    REASON_TASK_NOT_COVERED,
    REASON_TOKEN_MISSING,
    REASON_TOKEN_UNKNOWN,
)

log = logging.getLogger("shellexec.bridge")

CANCELLED = ACP_STOP_CANCELLED
# The stop reason recorded when the prompt failed (the agent crashed or answered an error):
# not an ACP stop reason on purpose, so it cannot be mistaken for one the agent sent.
AGENT_FAILED = "agent_error"
# How long an agent may take to exit once its stdin is closed, before SIGTERM.
AGENT_EXIT_SECONDS = 3.0
# How long the last updates may take to reach the service before the user hears that the
# bridge waits for them: up to the rest of --retry-for while the service is away.
FLUSH_NOTICE_SECONDS = 2.0
# Refusals of the bridge's token: the user must pass another one, retrying cannot help
# (their reasons say which hint fits: `token_refused`).
TOKEN_REFUSALS = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED"})
# The task of a run without --task-id: a new one, `bridge-` and 12 hex digits.
NEW_TASK_PREFIX = "bridge-"
_NEW_TASK = re.compile(rf"{NEW_TASK_PREFIX}[0-9a-f]{{12}}")


def new_task_id() -> str:
    """The task of a run without --task-id."""
    return f"{NEW_TASK_PREFIX}{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True, slots=True)
class RunResult:
    """A run whose turn was recorded; `error` is an agent failure that ended it early."""

    turn: ServiceTurn
    stop_reason: str
    exit_code: int
    error: BridgeError | None = None


def user_message(prompt: str) -> dict[str, Any]:
    """The update that shows the prompt in the chat, as an ACP client would echo it."""
    return {"sessionUpdate": ACP_USER_MESSAGE_CHUNK, "content": {"type": "text", "text": prompt}}


class BridgeRun:
    """The state of one run: options, signals, the forwarder and the service link."""

    def __init__(self, options: BridgeOptions, signals: Signals) -> None:
        self._options = options
        self._signals = signals
        self._files = FileAccess(options.cwd, read=options.allow_fs_read,
                                 write=options.allow_fs_write)
        self._forwarder = Forwarder(options.limits, agent=options.agent)
        self._link = ServiceLink(options.server, options.retry, token=options.token,
                                 tls=options.tls)
        self._cancel_sent = False
        self._calls = OpenCalls(options.agent)
        self._terminals: TerminalHost | None = None
        self._own = OwnSession()
        self._foreign_sessions: set[str | None] = set()
        self._user_words = UserWords()

    async def execute(self) -> RunResult:
        """Runs the agent and records its turn; raises what prevented recording it."""
        try:
            turn, stop_reason, error = await self._run_agent()
            await self._signals.unless_signalled(
                self._flush(), f"{self._forwarder.pending} update(s) to reach the service")
            await self._signals.unless_signalled(
                self._link.complete_turn(turn, stop_reason), "the service to complete the turn")
            self._log_stats()
            exit_code = self._signals.exit_code or (error.exit_code if error else 0)
            return RunResult(turn, stop_reason, exit_code, error)
        finally:
            await self._forwarder.stop()
            await self._link.close()

    async def _flush(self) -> None:
        """Waits until every recorded update reached the service. A wait that lasts says so,
        and how to end it: a user who pressed Ctrl-C twice for a stubborn agent was left
        waiting in silence through the rest of an outage."""
        await noticing(self._forwarder.flush(), FLUSH_NOTICE_SECONDS, lambda: log.warning(
            "%d update(s) still to reach the service; waiting for them (Ctrl-C stops "
            "waiting, and they are not recorded)", self._forwarder.pending))

    async def _run_agent(self) -> tuple[ServiceTurn, str, AgentError | None]:
        options = self._options
        environment = agent_environment(options.env_names, os.environ)
        log.info("agent environment: %s", " ".join(environment.names()))
        for name in environment.missing:
            log.warning("--env %s: not set in this environment; not passed", name)
        if options.host_terminals:
            self._terminals = TerminalHost(options.cwd, environment.values,
                                           options.terminal_timeout, self._forwarder.enqueue,
                                           self._calls)
        client = BridgeClient(options.permission, self._files, lambda: self._cancel_sent,
                              self._terminals, self._own)
        async with running_agent(options.command, environment.values, options.cwd, client,
                                 self._observed, self._asked, AGENT_EXIT_SECONDS,
                                 own=self._own, foreign=self._foreign) as agent:
            try:
                acp_session = await self._signals.unless_signalled(
                    open_acp_session(agent, options.cwd, self._files, options.host_terminals),
                    "the agent to start")
                # Known from the stream already, unless the answer overtook the request's
                # own notice to the observer.
                self._own.id = self._own.id or acp_session
                turn = await self._signals.unless_signalled(
                    self._open_turn(), "the service to open a session")
                log.info("recording into session %s (%s)", turn.session_id,
                         options.session_url(turn.session_id))
                self._forwarder.start(functools.partial(self._link.publish, turn.session_id))
                stop_reason, error = await self._prompt(agent, acp_session)
            finally:
                await self._stop_terminals()
        return turn, stop_reason, error

    def _observed(self, update: object) -> None:
        """Each `session/update` of the agent, in arrival order: followed, then recorded. A
        terminal update the agent sent for a terminal the bridge hosts is dropped: the bridge
        records that terminal's output and exit itself, and the agent's must not overwrite
        them (ADR 0087); so is a `user_message_chunk`, the user's words (`user_words`). A
        hosted terminal held for a call this update ends is recorded before it."""
        if ((self._terminals is not None and self._terminals.forged(update))
                or self._user_words.forged(update)):
            self._forwarder.stats.rejected += 1
            return
        self._calls.observe(update)
        if self._terminals is not None:
            self._terminals.before_recording()
        self._forwarder.enqueue(update)
        if self._terminals is not None:
            self._terminals.observe(update)

    def _foreign(self, method: str, session_id: object) -> None:
        """An update or permission request for another session than the run's, or naming
        none: not recorded (the permission request is refused by its handler, or by the SDK
        when it names no session). Said once per session."""
        self._forwarder.stats.rejected += 1
        name = None if session_id is None else str(session_id)[:80]
        if name not in self._foreign_sessions and len(self._foreign_sessions) < 100:
            self._foreign_sessions.add(name)
            named = "naming no session" if name is None else f"for session {name!r}"
            own = None if self._own.id is None else quoted_start(self._own.id, repr)
            log.warning("agent sent %s %s, not the session this bridge opened (%s): not "
                        "recorded", method, named, own)

    def _asked(self, params: object) -> None:
        """A permission request, in arrival order: the call it names is recorded as a
        `tool_call` when the agent has not reported that call (ADR 0131)."""
        update = announced_call(params)
        if update is not None and not self._calls.known(update["toolCallId"]):
            self._observed(update)

    async def _stop_terminals(self) -> None:
        """Kills what every hosted terminal started and still runs (their exits are recorded
        before the turn is completed)."""
        if self._terminals is not None:
            await self._terminals.stop_all()

    async def _open_turn(self) -> ServiceTurn:
        try:
            return await self._link.open_turn(self._options.task_id, self._options.agent)
        except ServiceRejectedError as refusal:
            if refusal.code in TOKEN_REFUSALS:
                raise token_refused(refusal, self._options.token, self._options.task_id
                                    ) from None
            if refusal.code != "INVALID_ARGUMENT":
                raise
            raise refused_options(refusal) from None

    async def _prompt(self, agent: AgentHandle, session_id: str
                      ) -> tuple[str, AgentError | None]:
        self._forwarder.enqueue(user_message(self._options.prompt))
        prompt = asyncio.ensure_future(agent.connection.prompt(
            session_id=session_id, prompt=[text_block(self._options.prompt)]))
        signalled = asyncio.ensure_future(self._signals.wait_beyond(0))
        failed = asyncio.ensure_future(self._forwarder.failed.wait())
        try:
            await asyncio.wait({prompt, signalled, failed}, return_when=asyncio.FIRST_COMPLETED)
            if not prompt.done():
                await self._cancel(agent, session_id, prompt)
        finally:
            signalled.cancel()
            failed.cancel()
        if self._forwarder.failure is not None:
            raise self._forwarder.failure
        return await _outcome(agent, prompt, self._cancel_sent)

    async def _cancel(self, agent: AgentHandle, session_id: str,
                      prompt: asyncio.Future[PromptResponse]) -> None:
        """`session/cancel`, then up to `cancel_grace` seconds in all for the prompt to
        return. Sending the cancel counts in that time: an agent that stopped reading its
        stdin never takes it, and the bridge waited for it without end, deaf to signals."""
        self._cancel_sent = True
        why = self._signals.received[0].name if self._signals.received else "service failure"
        grace = self._options.cancel_grace
        log.warning("%s: cancelling the agent's prompt (waiting up to %g s for it)", why, grace)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        try:
            await self._signals.unless_signalled(
                _sent_by(deadline, agent.connection.cancel(session_id=session_id)),
                "the agent to take session/cancel")
        except SignalError:  # a second signal: stop waiting now
            deadline = loop.time()
        await self._stop_terminals()
        with contextlib.suppress(SignalError):
            await self._signals.unless_signalled(
                asyncio.wait({prompt}, timeout=max(0.0, deadline - loop.time())),
                "the agent to cancel")
        if not prompt.done():
            log.warning("the agent did not end its prompt; stopping it")
            prompt.cancel()
            await asyncio.wait({prompt})

    def _log_stats(self) -> None:
        stats = self._forwarder.stats
        log.info("published %d update(s); %d already stored; %d refused", stats.published,
                 stats.duplicates, stats.rejected)


def token_refused(refusal: ServiceRejectedError, token: str, task_id: str) -> UsageError:
    """The usage error for a session the service refused to create for want of a token, with
    what to do. The refusal's reason (docs/api.md, "Error reasons") says which hint fits:

    - TOKEN_MISSING: the service received no token (none was given, or something on the way
      dropped the header);
    - TOKEN_UNKNOWN: the service does not know the token (revoked, made for another
      database, mistyped: its form was checked before the agent started);
    - SCOPE_MISSING: the token is known but lacks the ingest scope;
    - TASK_NOT_COVERED: the token is limited to tasks (`token create --tasks`) that do not
      include the run's: the hint names the task and --task-id (without it, the bridge
      records into a new `bridge-…` task, which no such token covers).

    A refusal without a reason (a service from before 2026-12-06) is told apart as far as it
    can be, by its code and whether a token was sent (`_token_refused_by_code`). The
    service's message comes first either way."""
    reason = refusal.reason
    if reason == REASON_TOKEN_MISSING and not token:
        return _no_token_given(refusal)
    if reason == REASON_TOKEN_MISSING:
        return UsageError(f"the service received no token: {refusal.details} (one was given, "
                          "so something between the bridge and the service dropped its "
                          "`authorization` header: point --server at the service or its "
                          "front door)")
    if reason == REASON_TOKEN_UNKNOWN:
        return _unknown_token(refusal)
    if reason == REASON_SCOPE_MISSING:
        return UsageError(f"the service refused the token: {refusal.details} (the token "
                          "lacks the ingest scope: pass --token or set SHELLEXEC_TOKEN to a "
                          "token with the ingest scope)")
    if reason == REASON_TASK_NOT_COVERED:
        return UsageError(f"the service refused the token: {refusal.details} (the token is "
                          f"limited to tasks that do not include this run's task {task_id!r}: "
                          "pass --task-id with a task the token covers, or set --token or "
                          "SHELLEXEC_TOKEN to a token whose tasks include this one"
                          f"{_new_task_note(task_id)})")
    return _token_refused_by_code(refusal, token, task_id)


def _no_token_given(refusal: ServiceRejectedError) -> UsageError:
    return UsageError(f"the service requires a token, and none was given: {refusal.details} "
                      "(pass --token or set SHELLEXEC_TOKEN to a token with the ingest scope)")


def _unknown_token(refusal: ServiceRejectedError) -> UsageError:
    return UsageError(f"the service refused the token: {refusal.details} (the service does "
                      "not know this token: pass --token or set SHELLEXEC_TOKEN to one it "
                      "issued, with the ingest scope)")


def _new_task_note(task_id: str) -> str:
    """What the hint adds when the run's task is the bridge's own new one."""
    return (f"; without --task-id the bridge records into a new task, {NEW_TASK_PREFIX}"
            "<random>" if _NEW_TASK.fullmatch(task_id) else "")


def _token_refused_by_code(refusal: ServiceRejectedError, token: str,
                           task_id: str) -> UsageError:
    """The hint for a token refusal without a reason: its code and what the bridge sent tell
    the cases apart as far as the user must act. UNAUTHENTICATED without a token: none was
    given; with one: the service does not know it; PERMISSION_DENIED: the token lacks the
    ingest scope or does not cover the run's task, which the code does not tell apart, so
    the hint names both (the service's message, first, says which it was)."""
    if refusal.code == "UNAUTHENTICATED" and not token:
        return _no_token_given(refusal)
    if refusal.code == "UNAUTHENTICATED":
        return _unknown_token(refusal)
    return UsageError(f"the service refused the token: {refusal.details} (a token needs the "
                      "ingest scope and, if it is limited to certain tasks, a pattern matching "
                      f"this run's task {task_id!r}: pass --task-id with a task the token "
                      "covers, or set --token or SHELLEXEC_TOKEN to a token with the ingest "
                      f"scope for this task{_new_task_note(task_id)})")


async def _sent_by(deadline: float, sending: Awaitable[None]) -> None:
    """Awaits `sending` until the loop's time `deadline`; a send that fails (the agent is
    gone) or is not taken by then is given up."""
    with contextlib.suppress(Exception):  # TimeoutError, or the agent's pipe is gone
        async with asyncio.timeout_at(deadline):
            await sending


async def _outcome(agent: AgentHandle, prompt: asyncio.Future[PromptResponse],
                   cancel_sent: bool) -> tuple[str, AgentError | None]:
    if prompt.cancelled():
        return CANCELLED, None
    error = prompt.exception()
    if error is None:
        return str(prompt.result().stop_reason), None
    if cancel_sent:
        # ACP wants `stopReason: cancelled`, but some agents answer a cancelled prompt with
        # the error their aborted model call raised; the user asked for this, it is no failure.
        log.info("the cancelled prompt ended with an error: %s", failure_reason(error))
        return CANCELLED, None
    # A lost connection usually means the agent died: give it a moment so the message can
    # say with which status.
    await exited_within(agent.exited, 1.0)
    return AGENT_FAILED, AgentError("session/prompt",
                                    f"{failure_reason(error)}{agent.exit_note()}")

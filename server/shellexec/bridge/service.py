"""The bridge's link to the shellexec service: every call retried within the outage window."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shellexec.bridge.errors import ServiceRejectedError
from shellexec.bridge.retry import RetryPolicy, retrying
from shellexec.client import AsyncShellExecClient

log = logging.getLogger("shellexec.bridge")

# A call to a live server answers in milliseconds; a server that hangs (stopped, swapping)
# should count against the outage window instead of blocking for the client's 30 s default.
CALL_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class ServiceTurn:
    """The service session the agent's ACP session is recorded into, and its open turn."""

    session_id: str
    turn_id: str


class ServiceLink:
    """Creates the session and turn, publishes updates, completes the turn."""

    def __init__(self, target: str, policy: RetryPolicy,
                 call_timeout: float = CALL_TIMEOUT_SECONDS) -> None:
        self._target = target
        self._policy = policy
        self._call_timeout = min(call_timeout, max(policy.window, 1.0))
        self._client = self._connect()

    def _connect(self) -> AsyncShellExecClient:
        return AsyncShellExecClient(self._target, timeout=self._call_timeout)

    async def _reconnect(self) -> None:
        """A fresh channel: gRPC's own reconnect backoff would wait up to two minutes."""
        stale, self._client = self._client, self._connect()
        await stale.close()

    async def close(self) -> None:
        await self._client.close()

    async def open_turn(self, task_id: str, agent: str) -> ServiceTurn:
        """Creates a session for `task_id` and starts its turn."""
        try:
            return await self._open_turn_once(task_id, agent)
        except ServiceRejectedError as error:
            # StartTurn on a brand-new session only fails this way when an earlier attempt
            # succeeded but its answer was lost; its turn id is unknowable, so start over.
            if error.code != "FAILED_PRECONDITION":
                raise
            log.warning("turn already open after a lost answer; creating a new session")
            return await self._open_turn_once(task_id, agent)

    async def _open_turn_once(self, task_id: str, agent: str) -> ServiceTurn:
        session = await retrying(self._policy, "create the session",
                                 lambda: self._client.create_session(task_id, agent),
                                 self._reconnect)
        turn = await retrying(self._policy, "start the turn",
                              lambda: self._client.start_turn(session.id), self._reconnect)
        return ServiceTurn(session_id=session.id, turn_id=turn.id)

    async def publish(self, session_id: str, sequence: int, update: Mapping[str, Any]) -> bool:
        """Publishes one update; True when the service had already stored this sequence."""
        response = await retrying(self._policy, f"publish update #{sequence}",
                                  lambda: self._client.publish(session_id, update, sequence),
                                  self._reconnect)
        return bool(response.duplicate)

    async def complete_turn(self, turn: ServiceTurn, stop_reason: str) -> list[str]:
        """Completes the turn; returns the ids of the messages it marked `cancelled`."""
        response = await retrying(
            self._policy, "complete the turn",
            lambda: self._client.complete_turn(turn.session_id, turn.turn_id, stop_reason),
            self._reconnect)
        return list(response.cancelled_message_ids)

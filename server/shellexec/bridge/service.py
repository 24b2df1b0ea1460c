"""The bridge's link to the shellexec service: every call retried within the outage window."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

import grpc
from google.protobuf import struct_pb2

from shellexec.bridge.errors import BridgeError, ServiceRejectedError, UsageError
from shellexec.bridge.retry import RetryPolicy, describe, retrying
from shellexec.bridge.tls_failures import tls_failure
from shellexec.client import AsyncShellExecClient
from shellexec.vocabulary import REASON_TURN_ALREADY_RUNNING

log = logging.getLogger("shellexec.bridge")

# A call to a live server answers in milliseconds; a server that hangs (stopped, swapping)
# should count against the outage window instead of blocking for the client's 30 s default.
CALL_TIMEOUT_SECONDS = 10.0


def new_request_id() -> str:
    """A request id for one logical CreateSession or StartTurn call and all its retries."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class ServiceTurn:
    """The service session the agent's ACP session is recorded into, and its open turn."""

    session_id: str
    turn_id: str


class ServiceLink:
    """Creates the session and turn, publishes updates, completes the turn."""

    def __init__(self, target: str, policy: RetryPolicy,
                 call_timeout: float = CALL_TIMEOUT_SECONDS, token: str = "",
                 tls: bool | bytes = False) -> None:
        self._target = target
        self._token = token
        self._tls = tls
        self._policy = policy
        self._call_timeout = min(call_timeout, max(policy.window, 1.0))
        self._client = self._connect()

    def _connect(self) -> AsyncShellExecClient:
        return AsyncShellExecClient(self._target, timeout=self._call_timeout,
                                    token=self._token, tls=self._tls)

    async def _reconnect(self) -> None:
        """A fresh channel: gRPC's own reconnect backoff would wait up to two minutes."""
        stale, self._client = self._client, self._connect()
        await stale.close()

    async def close(self) -> None:
        await self._client.close()

    async def open_turn(self, task_id: str, agent: str) -> ServiceTurn:
        """Creates a session for `task_id` and starts its turn.

        Each call carries one request id on all its retries, so an answer lost on the way
        back makes the retry return the same session or turn instead of a second one.
        """
        create_id = new_request_id()
        session = await retrying(self._policy, "create the session",
                                 lambda: self._client.create_session(task_id, agent, create_id),
                                 self._reconnect, self._untrusted)
        return ServiceTurn(session_id=session.id, turn_id=await self._start_turn(session.id))

    def _untrusted(self, error: grpc.aio.AioRpcError) -> BridgeError | None:
        """A TLS failure of the run's first call (creating the session) that every attempt
        would meet (a certificate not trusted or naming another host, a server that does not
        speak TLS): the options are wrong, and waiting out the retry window cannot help.
        Once the service was reached, the same failure is retried like an outage (the front
        door changed its certificate), so only the first call asks."""
        failure = tls_failure(error.details() or "") if self._tls is not False else None
        if failure is None or not failure.definite:
            return None
        return UsageError(f"cannot reach the service at {self._target} over TLS: "
                          f"{failure.what} ({describe(error)})")

    async def _start_turn(self, session_id: str) -> str:
        start_id = new_request_id()
        try:
            turn = await retrying(self._policy, "start the turn",
                                  lambda: self._client.start_turn(session_id, start_id),
                                  self._reconnect)
            return str(turn.id)
        except ServiceRejectedError as error:
            if error.reason != REASON_TURN_ALREADY_RUNNING:
                raise
            refusal = error
        # The session is this run's own, so its open turn is too: started by an attempt whose
        # answer was lost and whose request id the service no longer knows (it forgot it, or
        # predates request ids). Adopt it.
        session = await retrying(self._policy, "find the open turn",
                                 lambda: self._client.get_session(session_id), self._reconnect)
        if not session.current_turn_id:
            raise refusal
        log.warning("adopting turn %s, opened by an attempt whose answer was lost",
                    session.current_turn_id)
        return str(session.current_turn_id)

    async def publish(self, session_id: str, sequence: int, update: struct_pb2.Value) -> bool:
        """Publishes one update, converted by the forwarder; True when the service had already
        stored this sequence."""
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

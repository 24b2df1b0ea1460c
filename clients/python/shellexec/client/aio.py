"""The asyncio client (grpc.aio), for bridges and services on an event loop: the methods of
the blocking client, with the same parameters, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Iterable
from types import TracebackType
from typing import Any, TypeVar

import grpc

from shellexec.client._auth import async_bearer_token, check_token
from shellexec.client._channel import Tls, call_timeout, channel_credentials
from shellexec.client._values import (
    CHANNEL_OPTIONS,
    build_request,
    normalize_values,
    publish_request,
    watch_request,
)
from shellexec.v1 import message_pb2, session_pb2, shell_output_pb2
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

T = TypeVar("T")

# What a call in flight when the client closes fails with: grpc.RpcError CANCELLED, as the
# blocking client's calls do (the Go and Java clients fail CANCELLED too).
_CLOSED_DETAILS = "the client was closed while the call was in flight"


class AsyncShellExecClient:
    """Asynchronous calls to a shellexec server at `target` (host:port); `timeout`, `token`
    (sent as `authorization: Bearer` on every call) and `tls` (plaintext or TLS) are taken, and
    refused, as by `ShellExecClient`."""

    def __init__(self, target: str, timeout: float | None = 30.0, token: str = "",
                 tls: Tls = False) -> None:
        self._timeout = call_timeout(timeout)
        if token:
            check_token(token)
        credentials = channel_credentials(tls)
        interceptors = async_bearer_token(token) if token else None
        self._channel = (
            grpc.aio.secure_channel(target, credentials, options=CHANNEL_OPTIONS,
                                    interceptors=interceptors)
            if credentials else
            grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS,
                                      interceptors=interceptors))
        self._stub = pb_grpc.ShellExecServiceStub(self._channel)
        self._closed = False

    async def __aenter__(self) -> AsyncShellExecClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the channel; a call in flight, a feed being read among them, then fails
        with grpc.RpcError CANCELLED."""
        self._closed = True
        await self._channel.close()

    def _closed_under(self, error: asyncio.CancelledError) -> BaseException:
        """What a call ended by `error` raises: grpc.aio cancels the calls in flight when the
        channel closes, and they ended with a CancelledError nobody asked for, which cancelled
        the awaiting task (and then its own awaiter). A cancellation of the awaiting task
        itself stays one."""
        task = asyncio.current_task()
        if not self._closed or task is None or task.cancelling():
            return error
        closed: BaseException = grpc.aio.AioRpcError(
            grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(),
            details=_CLOSED_DETAILS)
        return closed

    async def _answer(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except asyncio.CancelledError as error:
            ended = self._closed_under(error)
            if ended is error:
                raise
            raise ended from None

    async def normalize(self, updates: Iterable[Any], agent: str = "", *,
                        mask_secrets: bool = False) -> pb.NormalizeShellExecResponse:
        """The normalized record of one tool call's updates; with `mask_secrets`, credential
        forms in its text are masked as the service masks what browsers see."""
        request = build_request(pb.NormalizeShellExecRequest, updates=normalize_values(updates),
                                agent=agent, mask_secrets=mask_secrets)
        response: pb.NormalizeShellExecResponse = await self._answer(
            self._stub.NormalizeShellExec(request, timeout=self._timeout))
        return response

    async def summarize(self, output: shell_output_pb2.ShellOutput
                        ) -> shell_output_pb2.ShellOutputSummary:
        request = build_request(pb.SummarizeShellOutputRequest, output=output)
        response = await self._answer(
            self._stub.SummarizeShellOutput(request, timeout=self._timeout))
        return response.summary  # type: ignore[no-any-return]

    async def create_session(self, task_id: str, agent: str = "", request_id: str = ""
                             ) -> session_pb2.Session:
        """Creates a session; pass the same `request_id` on every retry of one call so that a
        lost answer creates no second session."""
        request = build_request(pb.CreateSessionRequest, task_id=task_id, agent=agent,
                                request_id=request_id)
        response = await self._answer(self._stub.CreateSession(request, timeout=self._timeout))
        return response.session  # type: ignore[no-any-return]

    async def get_session(self, session_id: str) -> session_pb2.Session:
        request = build_request(pb.GetSessionRequest, session_id=session_id)
        response = await self._answer(self._stub.GetSession(request, timeout=self._timeout))
        return response.session  # type: ignore[no-any-return]

    async def start_turn(self, session_id: str, request_id: str = "") -> session_pb2.Turn:
        """Starts a turn; pass the same `request_id` on every retry of one call so that a lost
        answer starts no second turn."""
        request = build_request(pb.StartTurnRequest, session_id=session_id,
                                request_id=request_id)
        response = await self._answer(self._stub.StartTurn(request, timeout=self._timeout))
        return response.turn  # type: ignore[no-any-return]

    async def publish(self, session_id: str, update: Any, sequence: int | None = None
                      ) -> pb.PublishUpdateResponse:
        """Publishes one update (the `params.update` object of an ACP `session/update`) of
        `session_id`, under `sequence` when given (a retry under the same sequence is
        answered `duplicate`). `update` is a plain JSON value, converted with
        `to_protobuf_value` on each call, or an already converted google.protobuf.Value,
        sent as it is."""
        request = publish_request(session_id, update, sequence)
        response: pb.PublishUpdateResponse = await self._answer(self._stub.PublishUpdate(
            request, timeout=self._timeout))
        return response

    async def complete_turn(self, session_id: str, turn_id: str, stop_reason: str = "end_turn"
                            ) -> pb.CompleteTurnResponse:
        request = build_request(pb.CompleteTurnRequest, session_id=session_id, turn_id=turn_id,
                                stop_reason=stop_reason)
        response: pb.CompleteTurnResponse = await self._answer(self._stub.CompleteTurn(
            request, timeout=self._timeout))
        return response

    async def list_messages(self, session_id: str, *, limit: int = 0, before: str = "",
                            after: str = "", sort: str = "") -> pb.ListMessagesResponse:
        request = build_request(pb.ListMessagesRequest, session_id=session_id, limit=limit,
                                before=before, after=after, sort=sort)
        response: pb.ListMessagesResponse = await self._answer(self._stub.ListMessages(
            request, timeout=self._timeout))
        return response

    async def list_sessions(self, *, limit: int = 0, before: str = "", after: str = "",
                            sort: str = "") -> pb.ListSessionsResponse:
        """A page of the sessions the caller may see, oldest first (`sort="desc"`: newest)."""
        request = build_request(pb.ListSessionsRequest, limit=limit, before=before, after=after,
                                sort=sort)
        response: pb.ListSessionsResponse = await self._answer(self._stub.ListSessions(
            request, timeout=self._timeout))
        return response

    async def shell_output(self, session_id: str, message_id: str
                           ) -> pb.GetShellOutputResponse:
        request = build_request(pb.GetShellOutputRequest, session_id=session_id,
                                message_id=message_id)
        response: pb.GetShellOutputResponse = await self._answer(self._stub.GetShellOutput(
            request, timeout=self._timeout))
        return response

    async def boot_state(self, task_id: str) -> pb.BootState:
        request = build_request(pb.GetBootStateRequest, task_id=task_id)
        response = await self._answer(
            self._stub.GetBootState(request, timeout=self._timeout))
        return response.initial_state  # type: ignore[no-any-return]

    async def delete_session(self, session_id: str) -> None:
        """Deletes the session with its messages, output and feed (needs `admin`)."""
        await self._answer(self._stub.DeleteSession(
            build_request(pb.DeleteSessionRequest, session_id=session_id), timeout=self._timeout))

    async def delete_task(self, task_id: str) -> list[str]:
        """Deletes the task with all its sessions; returns the deleted sessions' ids."""
        response = await self._answer(self._stub.DeleteTask(
            build_request(pb.DeleteTaskRequest, task_id=task_id), timeout=self._timeout))
        return list(response.deleted_session_ids)

    async def watch(self, session_id: str, since_revision: int | None = None,
                    timeout: float | None = None
                    ) -> AsyncGenerator[pb.WatchMessagesResponse, None]:
        """The session's feed; iterate it with `async for`, and cancel it by closing the
        iterator (`aclose()`). Closing the client ends it with grpc.RpcError CANCELLED."""
        call = self._stub.WatchMessages(watch_request(session_id, since_revision),
                                        timeout=timeout)
        try:
            async for event in call:
                yield event
        except asyncio.CancelledError as error:
            ended = self._closed_under(error)
            if ended is error:
                raise
            raise ended from None
        finally:
            call.cancel()

    async def messages(self, session_id: str) -> list[message_pb2.Message]:
        """Every message of the session, oldest first (follows the pages)."""
        found: list[message_pb2.Message] = []
        cursor = ""
        while True:
            page = await self.list_messages(session_id, limit=500, after=cursor)
            found.extend(page.messages)
            if not page.has_more:
                return found
            cursor = page.cursor

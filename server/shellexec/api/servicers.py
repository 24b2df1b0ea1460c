"""The ShellExecService servicer. Each method: validate (`validation`), call a use case as
the caller `auth` authenticated, build a response.

Failures are not handled here: validation and use-case errors propagate to the error
interceptor (`interceptor`), which turns them into gRPC statuses for every method alike. A
stream checks its request and opens its feed before its first message, so its errors too
come before any message and Envoy turns them into a proper HTTP status.
A watcher's events are written one at a time, so that a watcher that stopped reading is
noticed and its stream ended (ADR 0046). Normalize and Publish take and answer bytes (see
`handlers`): `offload` parses and converts a large request off the event loop (ADR 0045).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import grpc

from shellexec.api import convert, request_work, validation
from shellexec.api.auth import current_caller
from shellexec.api.offload import Offload
from shellexec.feed import FeedEvent
from shellexec.service import Deletion, Publisher, Reader, Sessions
from shellexec.service.stateless import summarize_output
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

# The full name clients, health checks and reflection know the service by.
SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["ShellExecService"].full_name


class ShellExecServicer(pb_grpc.ShellExecServiceServicer):
    """Serves shellexec.v1.ShellExecService on top of the use cases."""

    def __init__(self, sessions: Sessions, publisher: Publisher, reader: Reader,
                 deletion: Deletion, offload: Offload, stalled_watcher_seconds: float) -> None:
        self._sessions = sessions
        self._deletion = deletion
        self._publisher = publisher
        self._reader = reader
        self._offload = offload
        self._stalled_after = stalled_watcher_seconds

    async def NormalizeShellExec(self, request: bytes,
                                 context: grpc.aio.ServicerContext) -> bytes:
        return await self._offload.run(request_work.normalize_response, request,
                                       current_caller().name)

    async def SummarizeShellOutput(self, request: pb.SummarizeShellOutputRequest,
                                   context: grpc.aio.ServicerContext
                                   ) -> pb.SummarizeShellOutputResponse:
        summary = summarize_output(validation.summarize(request))
        return pb.SummarizeShellOutputResponse(summary=convert.summary(summary))

    async def CreateSession(self, request: pb.CreateSessionRequest,
                            context: grpc.aio.ServicerContext) -> pb.CreateSessionResponse:
        args = validation.create_session(request)
        record = await self._sessions.create(args.task_id, args.agent, args.request_id,
                                             caller=current_caller())
        return pb.CreateSessionResponse(session=convert.session(record))

    async def GetSession(self, request: pb.GetSessionRequest,
                         context: grpc.aio.ServicerContext) -> pb.GetSessionResponse:
        record = await self._sessions.get(validation.get_session(request),
                                          caller=current_caller())
        return pb.GetSessionResponse(session=convert.session(record))

    async def ListSessions(self, request: pb.ListSessionsRequest,
                           context: grpc.aio.ServicerContext) -> pb.ListSessionsResponse:
        args = validation.list_sessions(request)
        page = await self._sessions.list_sessions(args.size, args.before, args.after,
                                                  args.descending, caller=current_caller())
        return pb.ListSessionsResponse(
            sessions=[convert.session(record) for record in page.sessions], total=page.total,
            has_more=page.has_more, cursor=page.cursor)

    async def StartTurn(self, request: pb.StartTurnRequest,
                        context: grpc.aio.ServicerContext) -> pb.StartTurnResponse:
        args = validation.start_turn(request)
        record = await self._sessions.start_turn(args.session_id, args.request_id,
                                                 caller=current_caller())
        return pb.StartTurnResponse(turn=convert.turn(record))

    async def PublishUpdate(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        args = await self._offload.run(request_work.publish_args, request,
                                       current_caller().name)
        result = await self._publisher.publish(args.session_id, args.update, args.sequence,
                                              caller=current_caller())
        message = None if result.message is None else convert.message(result.message)
        response = pb.PublishUpdateResponse(message=message, duplicate=result.duplicate)
        return bytes(response.SerializeToString())

    async def CompleteTurn(self, request: pb.CompleteTurnRequest,
                           context: grpc.aio.ServicerContext) -> pb.CompleteTurnResponse:
        args = validation.complete_turn(request)
        completed = await self._sessions.complete_turn(
            args.session_id, args.turn_id, args.stop_reason, caller=current_caller())
        return pb.CompleteTurnResponse(turn=convert.turn(completed.turn),
                                       cancelled_message_ids=completed.cancelled_message_ids)

    async def ListMessages(self, request: pb.ListMessagesRequest,
                           context: grpc.aio.ServicerContext) -> pb.ListMessagesResponse:
        args = validation.list_messages(request)
        page = await self._reader.list_messages(
            args.session_id, args.size, args.before, args.after, args.descending,
            caller=current_caller())
        return pb.ListMessagesResponse(
            messages=[convert.message(view) for view in page.messages], total=page.total,
            has_more=page.has_more, cursor=page.cursor,
            turns=[convert.turn(view) for view in page.turns])

    async def GetShellOutput(self, request: pb.GetShellOutputRequest,
                             context: grpc.aio.ServicerContext) -> pb.GetShellOutputResponse:
        args = validation.get_shell_output(request)
        shell_output = await self._reader.shell_output(args.session_id, args.message_id,
                                                       caller=current_caller())
        return pb.GetShellOutputResponse(
            message_id=shell_output.message_id, status=shell_output.status,
            updated_at=convert.timestamp(shell_output.updated_at),
            output=convert.output(shell_output.output))

    async def WatchMessages(self, request: pb.WatchMessagesRequest,
                            context: grpc.aio.ServicerContext) -> None:
        args = validation.watch_messages(request)
        events: AsyncGenerator[FeedEvent, None] = await self._reader.watch(
            args.session_id, args.since_revision, caller=current_caller())
        try:
            async for event in events:
                try:
                    # Not `wait_for`, which drops a cancellation that comes as the write
                    # completes (Python 3.11): see `Subscription.next`.
                    async with asyncio.timeout(self._stalled_after):
                        await context.write(convert.feed_event(event))
                except TimeoutError:
                    # The watcher stopped reading and every buffer on the way is full.
                    # Ending the stream frees what it holds here; what was sent still
                    # reaches the watcher, which then resumes by revision.
                    break
        finally:
            await events.aclose()  # unsubscribes now, not when collected

    async def GetBootState(self, request: pb.GetBootStateRequest,
                           context: grpc.aio.ServicerContext) -> pb.GetBootStateResponse:
        boot = await self._reader.boot_state(validation.get_boot_state(request),
                                            caller=current_caller())
        return pb.GetBootStateResponse(initial_state=pb.BootState(
            session=convert.session(boot.session),
            messages=[convert.message(view) for view in boot.messages],
            task_state=boot.task_state, turns=[convert.turn(view) for view in boot.turns]))

    async def DeleteSession(self, request: pb.DeleteSessionRequest,
                            context: grpc.aio.ServicerContext) -> pb.DeleteSessionResponse:
        session_id = await self._deletion.delete_session(validation.delete_session(request),
                                                         caller=current_caller())
        return pb.DeleteSessionResponse(session_id=session_id)

    async def DeleteTask(self, request: pb.DeleteTaskRequest,
                         context: grpc.aio.ServicerContext) -> pb.DeleteTaskResponse:
        deleted = await self._deletion.delete_task(validation.delete_task(request),
                                                   caller=current_caller())
        return pb.DeleteTaskResponse(deleted_session_ids=deleted)

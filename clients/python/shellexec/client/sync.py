"""The blocking client."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any

import grpc

from shellexec.client._auth import BearerToken, check_token
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


class Feed(Iterator[pb.WatchMessagesResponse]):
    """A session's feed, open from `ShellExecClient.watch` on: iterate it for its events, and
    `close()` it (or leave a `with` block) when done, which ends the call and frees its place
    among the caller's feeds on the server."""

    def __init__(self, call: Any) -> None:
        self._call = call  # grpc's streaming call object

    def __iter__(self) -> Feed:
        return self

    def __next__(self) -> pb.WatchMessagesResponse:
        event: pb.WatchMessagesResponse = next(self._call)
        return event

    def close(self) -> None:
        """Ends the call (no more events); closing again does nothing."""
        self._call.cancel()

    # grpc's own name, which `watch` returned the bare call for before.
    cancel = close

    def __getattr__(self, name: str) -> Any:
        """The rest of grpc's call (`code()`, `details()`, `trailing_metadata()`,
        `is_active()`...), as `watch` returned it before."""
        return getattr(self._call, name)

    def __enter__(self) -> Feed:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


class ShellExecClient:
    """Blocking calls to a shellexec server at `target` (host:port). `timeout` is each unary
    call's deadline in seconds: None or 0 for none; a negative or non-finite one is refused
    (ValueError). `token` is sent as `authorization: Bearer` on every call (needed when the
    service has authentication on): at most 256 visible ASCII characters, else ValueError,
    saying what is wrong with it (a line feed read with it from a file) and never what it is.
    `tls` is False for plaintext, True to check the server against the system's trusted
    certificates, or a PEM file (its path, or its bytes) to check it against those
    certificates alone. After an outage the channel tries to reconnect at least every 5
    seconds."""

    def __init__(self, target: str, timeout: float | None = 30.0, token: str = "",
                 tls: Tls = False) -> None:
        self._timeout = call_timeout(timeout)
        if token:
            check_token(token)
        credentials = channel_credentials(tls)
        channel = (grpc.secure_channel(target, credentials, options=CHANNEL_OPTIONS)
                   if credentials else grpc.insecure_channel(target, options=CHANNEL_OPTIONS))
        self._channel = grpc.intercept_channel(channel, BearerToken(token)) if token else channel
        self._stub = pb_grpc.ShellExecServiceStub(self._channel)

    def __enter__(self) -> ShellExecClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def normalize(self, updates: Iterable[Any], agent: str = "", *,
                  mask_secrets: bool = False) -> pb.NormalizeShellExecResponse:
        """The normalized record of one tool call's updates; with `mask_secrets`, credential
        forms in its text are masked as the service masks what browsers see."""
        request = build_request(pb.NormalizeShellExecRequest, updates=normalize_values(updates),
                                agent=agent, mask_secrets=mask_secrets)
        return self._stub.NormalizeShellExec(  # type: ignore[no-any-return]
            request, timeout=self._timeout)

    def summarize(self, output: shell_output_pb2.ShellOutput
                  ) -> shell_output_pb2.ShellOutputSummary:
        request = build_request(pb.SummarizeShellOutputRequest, output=output)
        response = self._stub.SummarizeShellOutput(request, timeout=self._timeout)
        return response.summary  # type: ignore[no-any-return]

    def create_session(self, task_id: str, agent: str = "", request_id: str = ""
                         ) -> session_pb2.Session:
        """Creates a session; pass the same `request_id` on every retry of one call so that a
        lost answer creates no second session."""
        request = build_request(pb.CreateSessionRequest, task_id=task_id, agent=agent,
                                request_id=request_id)
        response = self._stub.CreateSession(request, timeout=self._timeout)
        return response.session  # type: ignore[no-any-return]

    def get_session(self, session_id: str) -> session_pb2.Session:
        request = build_request(pb.GetSessionRequest, session_id=session_id)
        response = self._stub.GetSession(request, timeout=self._timeout)
        return response.session  # type: ignore[no-any-return]

    def start_turn(self, session_id: str, request_id: str = "") -> session_pb2.Turn:
        """Starts a turn; pass the same `request_id` on every retry of one call so that a lost
        answer starts no second turn."""
        request = build_request(pb.StartTurnRequest, session_id=session_id,
                                request_id=request_id)
        response = self._stub.StartTurn(request, timeout=self._timeout)
        return response.turn  # type: ignore[no-any-return]

    def publish(self, session_id: str, update: Any, sequence: int | None = None
                ) -> pb.PublishUpdateResponse:
        """Publishes one update (the `params.update` object of an ACP `session/update`) of
        `session_id`, under `sequence` when given (a retry under the same sequence is
        answered `duplicate`). `update` is a plain JSON value, converted with
        `to_protobuf_value` on each call, or an already converted google.protobuf.Value,
        sent as it is."""
        request = publish_request(session_id, update, sequence)
        return self._stub.PublishUpdate(  # type: ignore[no-any-return]
            request, timeout=self._timeout)

    def complete_turn(self, session_id: str, turn_id: str, stop_reason: str = "end_turn"
                      ) -> pb.CompleteTurnResponse:
        request = build_request(pb.CompleteTurnRequest, session_id=session_id, turn_id=turn_id,
                                stop_reason=stop_reason)
        return self._stub.CompleteTurn(  # type: ignore[no-any-return]
            request, timeout=self._timeout)

    def list_messages(self, session_id: str, *, limit: int = 0, before: str = "",
                      after: str = "", sort: str = "") -> pb.ListMessagesResponse:
        request = build_request(pb.ListMessagesRequest, session_id=session_id, limit=limit,
                                before=before, after=after, sort=sort)
        return self._stub.ListMessages(  # type: ignore[no-any-return]
            request, timeout=self._timeout)

    def list_sessions(self, *, limit: int = 0, before: str = "", after: str = "",
                      sort: str = "") -> pb.ListSessionsResponse:
        """A page of the sessions the caller may see, oldest first (`sort="desc"`: newest)."""
        request = build_request(pb.ListSessionsRequest, limit=limit, before=before, after=after,
                                sort=sort)
        return self._stub.ListSessions(  # type: ignore[no-any-return]
            request, timeout=self._timeout)

    def shell_output(self, session_id: str, message_id: str) -> pb.GetShellOutputResponse:
        request = build_request(pb.GetShellOutputRequest, session_id=session_id,
                                message_id=message_id)
        return self._stub.GetShellOutput(  # type: ignore[no-any-return]
            request, timeout=self._timeout)

    def boot_state(self, task_id: str) -> pb.BootState:
        request = build_request(pb.GetBootStateRequest, task_id=task_id)
        response = self._stub.GetBootState(request, timeout=self._timeout)
        return response.initial_state  # type: ignore[no-any-return]

    def delete_session(self, session_id: str) -> None:
        """Deletes the session with its messages, output and feed (needs `admin`)."""
        self._stub.DeleteSession(build_request(pb.DeleteSessionRequest, session_id=session_id),
                                 timeout=self._timeout)

    def delete_task(self, task_id: str) -> list[str]:
        """Deletes the task with all its sessions; returns the deleted sessions' ids."""
        response = self._stub.DeleteTask(build_request(pb.DeleteTaskRequest, task_id=task_id),
                                         timeout=self._timeout)
        return list(response.deleted_session_ids)

    def watch(self, session_id: str, since_revision: int | None = None,
              timeout: float | None = None) -> Feed:
        """The session's feed, open at once; iterate it, and end it with `close()`."""
        return Feed(self._stub.WatchMessages(watch_request(session_id, since_revision),
                                             timeout=timeout))

    def messages(self, session_id: str) -> list[message_pb2.Message]:
        """Every message of the session, oldest first (follows the pages)."""
        found: list[message_pb2.Message] = []
        cursor = ""
        while True:
            page = self.list_messages(session_id, limit=500, after=cursor)
            found.extend(page.messages)
            if not page.has_more:
                return found
            cursor = page.cursor

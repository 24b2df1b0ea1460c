"""No request can hurt another: while live watchers follow one session (server-sent events
through Envoy, gRPC through Envoy and gRPC straight to the server), a burst of hostile requests
on other sessions (huge ids, `%FF`, deep JSON, garbage bytes, a body naming another session)
is refused, and every watcher still receives every event published after it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import grpc

from shellexec.client import ShellExecClient
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.acp import codex_start
from support.stack import Stack

SERVICE = "/shellexec.v1.ShellExecService/"
AFTER_BURST = 3
WAIT_SECONDS = 20.0
# (event type, revision, content); heartbeats carry no content.
Event = tuple[str, int, str]


@dataclass
class Watcher:
    """One live feed read on its own thread until it has AFTER_BURST message events."""

    name: str
    open_stream: Callable[[], Iterator[Event]]
    opened: threading.Event = field(default_factory=threading.Event)
    received: list[Event] = field(default_factory=list)
    failure: BaseException | None = None
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._read, name=self.name, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        stream = self.open_stream()
        try:
            for kind, revision, content in stream:
                self.opened.set()  # every stream opens with a heartbeat
                if kind.startswith("session.message."):
                    self.received.append((kind, revision, content))
                if len(self.received) >= AFTER_BURST:
                    return
        except BaseException as error:  # reported by the test
            self.failure = error
        finally:
            self.opened.set()
            close = getattr(stream, "close", None) or getattr(stream, "cancel", None)
            if close is not None:
                close()


def sse_events(stack: Stack, session_id: str) -> Iterator[Event]:
    for event in stack.api.watch(session_id):
        message = event.get("message") or {}
        yield str(event["type"]), int(event["revision"]), str(message.get("content", ""))


def grpc_events(client: ShellExecClient, session_id: str) -> Iterator[Event]:
    for event in client.watch(session_id, timeout=WAIT_SECONDS * 2):
        yield event.type, event.revision, event.message.content


def hostile_rest_requests(stack: Stack, other: str, victim: str) -> list[int]:
    """The REST half of the burst, on session `other`; the statuses they got."""
    api, base = stack.api, f"/api/v1/task-sessions/{other}"
    huge = "x" * (100 * 1024)
    deep = (b'{"update": {"sessionUpdate": "plan", "d": ' + b'{"x":' * 50 + b"1"
            + b"}" * 50 + b"}}")
    answers = [
        api.request("POST", f"{base}/updates",
                    {"session_id": huge, "update": codex_start("h1", "ls")}),
        api.request("POST", f"{base}/turns/turn_{'0' * 32}:complete", {"turn_id": huge}),
        api.request("POST", "/api/v1/task-sessions", {"task_id": "t", "request_id": huge}),
        api.request("GET", "/api/v1/task-sessions/%FF"),
        api.request("GET", f"{base}/messages/%FF/shell-output"),
        api.request("POST", f"{base}/updates", raw=deep),
        api.request("POST", f"{base}/updates",
                    {"session_id": victim, "update": codex_start("h2", "rm -rf /")}),
    ]
    return [answer.status for answer in answers]


def hostile_grpc_calls(target: str, other: str) -> list[grpc.StatusCode]:
    """The gRPC half of the burst against `target`; the codes they got."""
    huge = "x" * (1024 * 1024)
    requests: list[tuple[str, bytes]] = [
        ("GetSession", pb.GetSessionRequest(session_id=huge).SerializeToString()),
        ("ListMessages",
         pb.ListMessagesRequest(session_id=other, before=huge).SerializeToString()),
        ("GetSession", b"\xff\xff\xff\xff"),
        ("GetSession", b"\x0a\x02\xff\xfe"),  # session_id that is not UTF-8
        ("PublishUpdate", b"\x12\x05garbage"),
    ]
    codes = []
    with grpc.insecure_channel(target) as channel:
        for method, body in requests:
            call = channel.unary_unary(SERVICE + method)
            try:
                call(body, timeout=10)
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as error:
                codes.append(error.code())
        watch = channel.unary_stream(SERVICE + "WatchMessages")
        try:
            list(watch(b"\xff\xff", timeout=10))
            codes.append(grpc.StatusCode.OK)
        except grpc.RpcError as error:
            codes.append(error.code())
    return codes


def test_hostile_requests_never_reset_another_clients_feed(stack: Stack) -> None:
    victim = stack.api.new_session()["id"]
    other = stack.api.new_session()["id"]
    through_envoy = ShellExecClient(f"127.0.0.1:{stack.rest_port}")
    direct = stack.client()
    watchers = [
        *(Watcher(f"sse{index}", lambda: sse_events(stack, victim)) for index in range(2)),
        *(Watcher(f"envoy-grpc{index}", lambda: grpc_events(through_envoy, victim))
          for index in range(2)),
        Watcher("direct-grpc", lambda: grpc_events(direct, victim)),
    ]
    try:
        for watcher in watchers:
            watcher.start()
        for watcher in watchers:
            assert watcher.opened.wait(WAIT_SECONDS), f"{watcher.name} never opened"
            assert watcher.failure is None, (watcher.name, watcher.failure)

        statuses = hostile_rest_requests(stack, other, victim)
        envoy_codes = hostile_grpc_calls(f"127.0.0.1:{stack.rest_port}", other)
        direct_codes = hostile_grpc_calls(stack.grpc_target, other)

        published = [f"after burst {index}" for index in range(AFTER_BURST)]
        for index, command in enumerate(published):
            stack.api.publish(victim, codex_start(f"after{index}", command))
        for watcher in watchers:
            assert watcher.thread is not None
            watcher.thread.join(WAIT_SECONDS)
        results = {w.name: ([c for _, _, c in w.received], w.failure) for w in watchers}
    finally:
        through_envoy.close()
        direct.close()

    assert results == {w.name: (published, None) for w in watchers}
    assert all(400 <= status < 500 for status in statuses), statuses
    refused = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND}
    assert set(envoy_codes) <= refused, envoy_codes
    assert set(direct_codes) <= refused, direct_codes

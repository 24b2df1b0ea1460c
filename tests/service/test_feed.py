"""The message feed through Envoy as server-sent events, and over gRPC."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from shellexec.client import ShellExecClient

from support.acp import agent_text, codex_delta, codex_start
from support.stack import Stack


def read_events(stack: Stack, session_id: str, query: str, count: int,
                stop_at_end: bool = True, heartbeats: bool = False) -> list[dict[str, Any]]:
    """Reads `count` SSE events (or until end_of_stream) from the REST feed; heartbeats are
    skipped unless `heartbeats` is set."""
    events: list[dict[str, Any]] = []
    feed = stack.api.watch(session_id, query)
    for event in feed:
        if event["type"] == "heartbeat" and not heartbeats:
            continue
        events.append(event)
        if len(events) >= count or (stop_at_end and events[-1]["type"] == "end_of_stream"):
            break
    feed.close()
    return events


def test_feed_replays_events_after_since_revision_with_growing_revisions(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("f1", "make"))
    stack.api.publish(session["id"], codex_delta("f1", "FEED-BODY\n"))
    stack.api.publish(session["id"], codex_start("f2", "ls"))
    events = read_events(stack, session["id"], "?since_revision=0", 3)
    assert [e["type"] for e in events] == [
        "session.message.added", "session.message.updated", "session.message.added"]
    assert [e["revision"] for e in events] == [1, 2, 3]
    assert [e["message"]["type"] for e in events] == ["tool_execute"] * 3
    assert events[1]["message"]["metadata"]["normalized"]["shell_exec"]["output"][
        "stdout_bytes"] == len("FEED-BODY\n")
    assert all("FEED-BODY" not in json.dumps(e) for e in events)


def test_a_replay_of_long_commands_delivers_each_event_once_in_order(stack: Stack) -> None:
    # Each message weighs about 800 KB (content, title and command of 256 KiB): the replay
    # reads the log a batch of about a megabyte at a time (ADR 0133).
    session = stack.api.new_session()
    commands = [f"echo {index} " + "x" * 300_000 for index in range(6)]
    for index, command in enumerate(commands):
        stack.api.publish(session["id"], codex_start(f"long{index}", command))
    events = read_events(stack, session["id"], "?since_revision=0", len(commands))
    assert [e["revision"] for e in events] == list(range(1, len(commands) + 1))
    assert [e["message"]["content"] for e in events] == [
        command.encode()[:262_144].decode() for command in commands]


def test_feed_resumes_from_last_revision_without_missing_events(stack: Stack) -> None:
    session = stack.api.new_session()
    for index in range(3):
        stack.api.publish(session["id"], codex_start(f"r{index}", f"echo {index}"))
    first = read_events(stack, session["id"], "?since_revision=0", 2)
    stack.api.publish(session["id"], codex_start("r3", "echo 3"))
    resumed = read_events(stack, session["id"], f"?since_revision={first[-1]['revision']}", 2)
    assert [e["revision"] for e in resumed] == [3, 4]
    assert resumed[1]["message"]["content"] == "echo 3"


def test_replayed_events_carry_each_messages_own_type(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], agent_text("hello"))
    stack.api.publish(session["id"], {"sessionUpdate": "tool_call", "toolCallId": "rd",
                                      "kind": "read", "title": "Read README.md"})
    stack.api.publish(session["id"], codex_start("sh", "ls"))
    events = read_events(stack, session["id"], "?since_revision=0", 3)
    assert [e["message"]["type"] for e in events] == ["message", "tool_call", "tool_execute"]


@pytest.mark.slow
def test_feed_delivers_live_events_and_heartbeats(stack: Stack) -> None:
    session = stack.api.new_session()
    received: list[dict[str, Any]] = []
    reader = threading.Thread(
        target=lambda: received.extend(read_events(stack, session["id"], "", 3, heartbeats=True)))
    reader.start()
    reader.join(timeout=1.5)  # a heartbeat arrives every 0.5 s in the test stack
    stack.api.publish(session["id"], codex_start("live1", "top"))
    reader.join(timeout=10)
    kinds = [e["type"] for e in received]
    assert "heartbeat" in kinds or "session.message.added" in kinds
    live = read_events(stack, session["id"], "?since_revision=0", 1)
    assert live[0]["message"]["content"] == "top"


def test_feed_for_unknown_session_is_404(stack: Stack) -> None:
    response = stack.api.request("GET", "/api/v1/task-sessions/ses_nope/messages:watch")
    assert response.status == 404


def test_feed_rejects_negative_since_revision(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request(
        "GET", f"/api/v1/task-sessions/{session['id']}/messages:watch?since_revision=-1")
    assert response.status == 400


@pytest.fixture
def short_lived_stack(stack_with: Callable[..., Stack]) -> Stack:
    return stack_with(SHELLEXEC_STREAM_LIFETIME_SECONDS="1")


@pytest.mark.slow
def test_feed_ends_in_band_with_end_of_stream(short_lived_stack: Stack) -> None:
    session = short_lived_stack.api.new_session()
    short_lived_stack.api.publish(session["id"], codex_start("end1", "ls"))
    events = read_events(short_lived_stack, session["id"], "?since_revision=0", 100)
    assert events[0]["type"] == "session.message.added"
    assert events[-1] == {"type": "end_of_stream", "revision": 1}


def test_grpc_watch_streams_the_same_events(stack: Stack, client: ShellExecClient) -> None:
    session = client.create_session("grpc-watch-task", agent="codex")
    client.publish(session.id, codex_start("g1", "make"))
    stream = iter(client.watch(session.id, since_revision=0, timeout=10))
    opening, first = next(stream), next(stream)
    stream.close()
    assert (opening.type, opening.revision) == ("heartbeat", 0)
    assert first.type == "session.message.added"
    assert first.revision == 1
    assert first.message.content == "make"


def test_feed_rejects_a_since_revision_ahead_of_the_session(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("ahead", "ls"))
    response = stack.api.request(
        "GET", f"/api/v1/task-sessions/{session['id']}/messages:watch?since_revision=50")
    assert response.status == 400
    assert response.json()["message"].startswith("since_revision")


@pytest.fixture
def quiet_stack(stack_with: Callable[..., Stack]) -> Stack:
    """A stack whose periodic heartbeat (60 s) cannot arrive within any test's wait."""
    return stack_with(SHELLEXEC_HEARTBEAT_SECONDS="60")


def test_sse_watch_is_answered_at_once_with_the_requested_revision(quiet_stack: Stack) -> None:
    session = quiet_stack.api.new_session()
    for index in range(3):
        quiet_stack.api.publish(session["id"], codex_start(f"q{index}", f"echo {index}"))
    # Without the opening heartbeat a quiet session would answer only after 60 s: the 15 s
    # socket timeout would fail the read.
    opening = read_events(quiet_stack, session["id"], "?since_revision=1", 1, heartbeats=True)
    assert opening == [{"type": "heartbeat", "revision": 1}]
    live_only = read_events(quiet_stack, session["id"], "", 1, heartbeats=True)
    assert live_only == [{"type": "heartbeat", "revision": 3}]


def test_grpc_watch_of_a_quiet_session_is_answered_at_once(quiet_stack: Stack) -> None:
    with quiet_stack.client() as client:
        session = client.create_session("quiet-grpc-task")
        # The deadline ends the call long before a periodic heartbeat could arrive.
        stream = iter(client.watch(session.id, timeout=15))
        opening = next(stream)
        stream.close()
    assert (opening.type, opening.revision) == ("heartbeat", 0)

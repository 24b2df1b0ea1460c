"""Turn boundaries in every browser payload (ADR 0090): the message list and the boot state
carry the turns of their messages and the running turn; the feed carries
`session.turn.started` and `session.turn.completed` with the turn, in revision order, live and
on replay."""

from __future__ import annotations

from typing import Any

from support.acp import agent_text
from support.stack import Stack

Json = dict[str, Any]


def turn_events(stack: Stack, session_id: str, count: int) -> list[Json]:
    """The first `count` events after revision 0 that are not heartbeats."""
    found: list[Json] = []
    feed = stack.api.watch(session_id, "?since_revision=0")
    for event in feed:
        if event["type"] != "heartbeat":
            found.append(event)
        if len(found) >= count:
            break
    feed.close()
    return found


def test_list_and_boot_state_carry_each_turn_with_its_stop_reason(stack: Stack) -> None:
    session = stack.api.new_session("claude")
    first = stack.api.start_turn(session["id"])
    stack.api.publish(session["id"], agent_text("first answer"))
    stack.api.complete_turn(session["id"], first, "max_tokens")
    second = stack.api.start_turn(session["id"])
    stack.api.publish(session["id"], agent_text("still thinking"))

    page = stack.api.list_messages(session["id"])
    turns = {turn["id"]: turn for turn in page["turns"]}
    assert [turn["id"] for turn in page["turns"]] == [first, second]  # oldest first
    assert turns[first]["state"] == "complete"
    assert turns[first]["stop_reason"] == "max_tokens"
    assert turns[first]["started_at"] <= turns[first]["completed_at"]
    assert turns[second]["state"] == "running"
    assert "completed_at" not in turns[second]
    assert [m["turn_id"] for m in page["messages"]] == [first, second]

    boot = stack.api.call("GET", f"/api/v1/tasks/{session['task_id']}/boot-state")
    assert boot["initial_state"]["turns"] == page["turns"]


def test_a_page_carries_only_its_own_turns_and_the_running_one(stack: Stack) -> None:
    session = stack.api.new_session()
    ids = []
    for index in range(3):
        ids.append(stack.api.start_turn(session["id"]))
        stack.api.publish(session["id"], agent_text(f"answer {index}"))
        stack.api.complete_turn(session["id"], ids[-1])
    running = stack.api.start_turn(session["id"])

    newest = stack.api.list_messages(session["id"], "?sort=desc&limit=1")
    assert [turn["id"] for turn in newest["turns"]] == [ids[2], running]
    oldest = stack.api.list_messages(session["id"], "?limit=1")
    assert [turn["id"] for turn in oldest["turns"]] == [ids[0], running]


def test_a_session_without_turns_lists_none(stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], agent_text("no turn open"))
    assert stack.api.list_messages(session["id"]).get("turns", []) == []


def test_the_feed_reports_turns_starting_and_completing(stack: Stack) -> None:
    session = stack.api.new_session()
    turn_id = stack.api.start_turn(session["id"])
    stack.api.publish(session["id"], agent_text("done"))
    stack.api.complete_turn(session["id"], turn_id, "refusal")

    events = turn_events(stack, session["id"], 3)
    assert [event["type"] for event in events] == [
        "session.turn.started", "session.message.added", "session.turn.completed"]
    assert [event["revision"] for event in events] == [1, 2, 3]
    started, _, completed = events
    assert started["turn"]["id"] == completed["turn"]["id"] == turn_id
    assert "message" not in started
    assert completed["turn"]["stop_reason"] == "refusal"
    assert completed["turn"]["state"] == "complete"
    assert stack.api.session(session["id"])["revision"] == 3


def test_a_live_watcher_sees_the_turn_complete(stack: Stack) -> None:
    session = stack.api.new_session()
    turn_id = stack.api.start_turn(session["id"])
    feed = stack.api.watch(session["id"], "?since_revision=1")
    assert next(feed)["type"] == "heartbeat"  # connected: what follows is live
    stack.api.complete_turn(session["id"], turn_id, "cancelled")
    event = next(e for e in feed if e["type"] != "heartbeat")
    feed.close()
    assert event["type"] == "session.turn.completed"
    assert event["turn"]["stop_reason"] == "cancelled"
    assert event["revision"] == 2

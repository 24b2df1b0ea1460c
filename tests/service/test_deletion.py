"""DeleteSession and DeleteTask through Envoy and over gRPC: what a deleted session held is
gone, its watchers hear `session_deleted` and their streams end, and its ids answer 404."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import psycopg
import pytest

from shellexec.client import ShellExecClient
from shellexec.demo.rest import RestError

from support.acp import codex_delta, codex_end, codex_start
from support.rest import unique
from support.stack import Stack


def seeded_session(stack: Stack, task_id: str | None = None) -> tuple[str, str, str]:
    """(session id, its task id, the id of its finished shell command)."""
    session = stack.api.new_session(task_id=task_id)
    turn = stack.api.start_turn(session["id"])
    stack.api.publish(session["id"], codex_start("c1", "make"), sequence=1)
    stack.api.publish(session["id"], codex_delta("c1", "BUILDING\n"), sequence=2)
    message = stack.api.play(session["id"], [codex_end("c1", "BUILDING\ndone\n", 0)])
    stack.api.complete_turn(session["id"], turn)
    return session["id"], session["task_id"], message


def rows_of(stack: Stack, session_id: str, number: int) -> dict[str, int]:
    """How many rows each table holds for the session (`number` keys events and receipts)."""
    def count(statement: str, key: object) -> int:
        return int(str(stack.sql(statement, key)[0][0]))

    by_session = {table: count(f"SELECT COUNT(*) FROM {table} WHERE session_id = ?", session_id)
                  for table in ("turn", "message", "turn_request", "session_request")}
    by_session["session"] = count("SELECT COUNT(*) FROM session WHERE id = ?", session_id)
    by_session["output_chunk"] = count(
        "SELECT COUNT(*) FROM output_chunk WHERE message_position IN "
        "(SELECT position FROM message WHERE session_id = ?)", session_id)
    for table in ("event", "publish_receipt"):
        by_session[table] = count(f"SELECT COUNT(*) FROM {table} WHERE session_number = ?",
                                  number)
    return by_session


def session_number(stack: Stack, session_id: str) -> int:
    return int(str(stack.sql("SELECT number FROM session WHERE id = ?", session_id)[0][0]))


def test_a_deleted_session_leaves_no_rows_and_its_ids_answer_404(stack: Stack) -> None:
    session_id, _, message_id = seeded_session(stack)
    number = session_number(stack, session_id)
    assert rows_of(stack, session_id, number)["output_chunk"] > 0

    answer = stack.api.call("DELETE", f"/api/v1/task-sessions/{session_id}")

    assert answer == {"session_id": session_id}
    assert set(rows_of(stack, session_id, number).values()) == {0}
    base = f"/api/v1/task-sessions/{session_id}"
    for method, path, body in [
            ("GET", base, None), ("GET", f"{base}/messages", None),
            ("GET", f"{base}/messages/{message_id}/shell-output", None),
            ("POST", f"{base}/updates", {"update": codex_start("c2", "ls")}),
            ("POST", f"{base}/turns", {}), ("DELETE", base, None)]:
        assert stack.api.request(method, path, body).status == 404, (method, path)
    with pytest.raises(RestError) as refused:
        next(stack.api.watch(session_id))
    assert refused.value.response is not None
    assert refused.value.response.status == 404


def test_watchers_receive_session_deleted_and_their_stream_ends(stack: Stack) -> None:
    session_id, _, _ = seeded_session(stack)
    feed = stack.api.watch(session_id)
    assert next(feed)["type"] == "heartbeat"  # the stream is open and subscribed

    stack.api.call("DELETE", f"/api/v1/task-sessions/{session_id}")

    rest = [event for event in feed if event["type"] != "heartbeat"]
    assert [event["type"] for event in rest] == ["session_deleted"]


def test_grpc_watchers_end_with_session_deleted(stack: Stack,
                                                client: ShellExecClient) -> None:
    session_id, _, _ = seeded_session(stack)
    stream: Any = client.watch(session_id, timeout=20)
    assert next(stream).type == "heartbeat"

    client.delete_session(session_id)

    assert [event.type for event in stream if event.type != "heartbeat"] == [
        "session_deleted"]
    with pytest.raises(grpc.RpcError) as missing:
        client.get_session(session_id)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_deleting_a_task_deletes_all_its_sessions_and_no_other(stack: Stack) -> None:
    task_id = unique("doomed")
    first, _, _ = seeded_session(stack, task_id)
    second, _, _ = seeded_session(stack, task_id)
    bystander, bystander_task, _ = seeded_session(stack)

    answer = stack.api.call("DELETE", f"/api/v1/tasks/{task_id}")

    assert answer == {"deleted_session_ids": [first, second]}
    for session_id in (first, second):
        assert stack.api.request("GET", f"/api/v1/task-sessions/{session_id}").status == 404
    assert stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 404
    assert stack.api.request("DELETE", f"/api/v1/tasks/{task_id}").status == 404
    assert stack.api.session(bystander)["id"] == bystander
    assert len(stack.api.messages(bystander)) == 1
    assert stack.api.call("GET", f"/api/v1/tasks/{bystander_task}/boot-state")


def test_a_task_another_writer_deleted_meanwhile_is_not_found(stack: Stack) -> None:
    """Two DeleteTask calls through two replicas both answered OK, naming the same sessions,
    and their watchers heard `session_deleted` twice: the unit reads the task's sessions
    before it locks them, and went on with those another replica had deleted meanwhile."""
    if not stack.on_postgres:
        pytest.skip("a SQLite database has one writer: no deletion lands between the two")
    task_id = unique("raced")
    seeded_session(stack, task_id)
    seeded_session(stack, task_id)
    with psycopg.connect(stack.env["SHELLEXEC_DATABASE_URL"]) as other_replica:
        other_replica.execute("SELECT id FROM session WHERE task_id = %s FOR UPDATE",
                              (task_id,))
        with ThreadPoolExecutor(max_workers=1) as pool:
            answer = pool.submit(stack.api.request, "DELETE", f"/api/v1/tasks/{task_id}")
            waiting = ("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND datname = current_database()")
            while not int(str(stack.sql(waiting)[0][0])) and not answer.done():
                time.sleep(0.05)  # until the deletion waits for the rows held here
            other_replica.execute("DELETE FROM session WHERE task_id = %s", (task_id,))
            other_replica.execute("DELETE FROM task WHERE id = %s", (task_id,))
            other_replica.commit()
            deleted = answer.result()
    assert deleted.status == 404, deleted.body[:300]


def test_deleting_a_running_session_leaves_its_task_to_its_other_sessions(
        stack: Stack, client: ShellExecClient) -> None:
    task_id = unique("kept")
    kept, _, _ = seeded_session(stack, task_id)
    running = stack.api.new_session(task_id=task_id)["id"]
    stack.api.start_turn(running)
    assert stack.api.call("GET", f"/api/v1/tasks/{task_id}/boot-state")[
        "initial_state"]["task_state"] == "running"

    client.delete_session(running)

    boot = stack.api.call("GET", f"/api/v1/tasks/{task_id}/boot-state")["initial_state"]
    assert boot["session"]["id"] == kept
    assert boot["task_state"] == "idle"
    assert client.delete_task(task_id) == [kept]


def test_ids_that_cannot_exist_answer_404(stack: Stack) -> None:
    for path in ("/api/v1/task-sessions/ses_nothex", "/api/v1/tasks/no%20such%20task"):
        assert stack.api.request("DELETE", path).status == 404, path


@pytest.mark.slow
def test_retention_deletes_a_session_idle_too_long_through_the_running_server(
        stack_with: Callable[..., Stack]) -> None:
    own = stack_with(SHELLEXEC_RETENTION_DAYS="1", SHELLEXEC_HOUSEKEEPING_SECONDS="0.2")
    stale, _, _ = seeded_session(own)
    fresh, _, _ = seeded_session(own)
    feed = own.api.watch(stale)
    assert next(feed)["type"] == "heartbeat"
    own.sql("UPDATE session SET active_at = active_at - 2 * 86400000000 WHERE id = ?",
            stale)  # two days without activity

    # The sweep runs every 0.2 s; the feed ends as soon as it has deleted the session.
    assert [event["type"] for event in feed if event["type"] != "heartbeat"] == [
        "session_deleted"]
    assert own.api.request("GET", f"/api/v1/task-sessions/{stale}").status == 404
    assert own.api.session(fresh)["id"] == fresh

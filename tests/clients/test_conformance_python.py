"""The conformance scenario (tests/clients/scenario.json, described in its README) played by
the Python client, straight to the server and through Envoy."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from shellexec.client import ShellExecClient, error_details
from shellexec.v1 import message_pb2, session_pb2

from support.stack import Stack

SCENARIO = json.loads((Path(__file__).parent / "scenario.json").read_text())
# A session the run created: its id, and the task id and agent it was created with.
Created = tuple[str, str, str]


@pytest.fixture(params=["direct", "envoy"])
def client(request: pytest.FixtureRequest, stack: Stack) -> Iterator[ShellExecClient]:
    target = stack.grpc_target if request.param == "direct" else f"127.0.0.1:{stack.rest_port}"
    with ShellExecClient(target) as client:
        yield client


def test_the_scenario_plays_as_written(client: ShellExecClient) -> None:
    run_task_id = f"{SCENARIO['session']['task_id_prefix']}-python-{uuid.uuid4().hex[:8]}"
    session = client.create_session(run_task_id, SCENARIO["session"]["agent"])
    created = [(session.id, run_task_id, SCENARIO["session"]["agent"])]
    turn = client.start_turn(session.id)
    for entry in SCENARIO["publishes"]:
        answer = client.publish(session.id, entry["update"], entry["sequence"])
        assert answer.duplicate is entry["duplicate"], entry["sequence"]
    client.complete_turn(session.id, turn.id, SCENARIO["stop_reason"])
    final = client.get_session(session.id)
    assert {"state": final.state, "revision": final.revision} == SCENARIO["final_session"]

    messages = _all_pages(client, session.id, SCENARIO["page_size"])
    assert [_described(message) for message in messages] == SCENARIO["messages"]
    _check_shell_output(client, session.id, messages)
    _check_watch(client, session.id, messages)
    created.append(_check_errors(client, run_task_id, session.id, messages))
    _check_session_list(client, run_task_id, created)


def _all_pages(client: ShellExecClient, session_id: str, page_size: int
               ) -> list[message_pb2.Message]:
    pages = [client.list_messages(session_id, limit=page_size)]
    while pages[-1].has_more:
        pages.append(client.list_messages(session_id, limit=page_size, after=pages[-1].cursor))
    assert len(pages) > 1, "page_size must be smaller than the number of messages"
    return [message for page in pages for message in page.messages]


def _described(message: message_pb2.Message) -> dict[str, Any]:
    """The message in the scenario's terms (the keys tests/clients/README.md lists)."""
    described: dict[str, Any] = {"author_type": message.author_type, "type": message.type,
                                 "content": message.content}
    if message.metadata.HasField("normalized"):
        shell = message.metadata.normalized.shell_exec
        described |= {"status": message.metadata.status, "command": shell.command,
                      "exit_code": shell.output.exit_code, "result": shell.result}
    return described


def _check_shell_output(client: ShellExecClient, session_id: str,
                        messages: list[message_pb2.Message]) -> None:
    expected = SCENARIO["shell_output"]
    answer = client.shell_output(session_id, messages[expected["message"]].id)
    assert {"message": expected["message"], "status": answer.status,
            "exit_code": answer.output.exit_code, "stdout": answer.output.stdout,
            "stderr": answer.output.stderr} == expected


def _check_watch(client: ShellExecClient, session_id: str,
                 messages: list[message_pb2.Message]) -> None:
    expected = [(event["revision"], event["type"],
                 "" if event["message"] is None else messages[event["message"]].id)
                for event in SCENARIO["watch"]["events"]]
    assert _watched(client, session_id, 0, len(expected)) == expected
    resume = SCENARIO["watch"]["resume_from_revision"]
    tail = [event for event in expected if event[0] > resume]
    assert _watched(client, session_id, resume, len(tail)) == tail


def _watched(client: ShellExecClient, session_id: str, since: int, count: int
             ) -> list[tuple[int, str, str]]:
    stream = client.watch(session_id, since, timeout=30)
    seen: list[tuple[int, str, str]] = []
    for event in stream:
        if event.type != "heartbeat":
            seen.append((event.revision, event.type, event.message.id))
        if len(seen) == count:
            break
    stream.close()
    return seen


def _check_errors(client: ShellExecClient, run_task_id: str, session_id: str,
                  messages: list[message_pb2.Message]) -> Created:
    """Checks the errors; returns the second session, which it creates."""
    foreign = SCENARIO["errors"]["foreign_message"]
    other_task_id = f"{run_task_id}-{foreign['task_suffix']}"
    other = client.create_session(other_task_id)
    with pytest.raises(grpc.RpcError) as not_found:
        client.shell_output(other.id, messages[foreign["message"]].id)
    assert not_found.value.code().name == foreign["code"]

    bad = SCENARIO["errors"]["bad_field"]
    with pytest.raises(grpc.RpcError) as invalid:
        client.list_messages(session_id, limit=bad["limit"])
    assert invalid.value.code().name == bad["code"]
    assert bad["field"] in dict(error_details(invalid.value).field_violations)

    bad = SCENARIO["errors"]["bad_session_list_field"]
    with pytest.raises(grpc.RpcError) as invalid:
        client.list_sessions(limit=bad["limit"])
    assert invalid.value.code().name == bad["code"]
    assert bad["field"] in dict(error_details(invalid.value).field_violations)
    return other.id, other_task_id, ""


def _check_session_list(client: ShellExecClient, run_task_id: str,
                        created: list[Created]) -> None:
    added = SCENARIO["session_list"]["added_session"]
    task_id = f"{run_task_id}-{added['task_suffix']}"
    created.append((client.create_session(task_id, added["agent"]).id, task_id, added["agent"]))
    listed = _newest_pages(client, SCENARIO["session_list"]["page_size"], created[0][0])
    runs = [(session.id, session.task_id, session.agent) for session in reversed(listed)
            if session.task_id == run_task_id or session.task_id.startswith(f"{run_task_id}-")]
    assert runs == created


def _newest_pages(client: ShellExecClient, page_size: int, oldest_id: str
                  ) -> list[session_pb2.Session]:
    """The sessions, newest first, page by page up to the one holding `oldest_id` (older
    sessions belong to other runs)."""
    pages = [client.list_sessions(limit=page_size, sort="desc")]
    while pages[-1].has_more and oldest_id not in {s.id for s in pages[-1].sessions}:
        pages.append(client.list_sessions(limit=page_size, sort="desc",
                                          before=pages[-1].cursor))
    assert len(pages) > 1, "session_list.page_size must be smaller than the run's sessions"
    return [session for page in pages for session in page.sessions]

"""The README's grpcurl commands, run with the real grpcurl binary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.stack import Stack

GRPCURL = str(Path(sys.executable).parent / "grpcurl")
SERVICE = "shellexec.v1.ShellExecService"


def grpcurl(*args: str) -> str:
    done = subprocess.run([GRPCURL, "-plaintext", *args], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_grpcurl_lists_services_through_reflection(stack: Stack) -> None:
    services = grpcurl(stack.grpc_target, "list").split()
    assert SERVICE in services
    assert "grpc.health.v1.Health" in services


def test_grpcurl_describes_the_service(stack: Stack) -> None:
    description = grpcurl(stack.grpc_target, "describe", SERVICE)
    assert "rpc PublishUpdate" in description
    assert "rpc WatchMessages" in description


@pytest.mark.parametrize(("method", "signature"), [
    (f"{SERVICE}.CreateSession", "rpc CreateSession ( .shellexec.v1.CreateSessionRequest ) "
                                 "returns ( .shellexec.v1.CreateSessionResponse )"),
    (f"{SERVICE}.WatchMessages", "rpc WatchMessages ( .shellexec.v1.WatchMessagesRequest ) "
                                 "returns ( stream .shellexec.v1.WatchMessagesResponse )"),
    ("grpc.health.v1.Health.Check", "rpc Check ( .grpc.health.v1.HealthCheckRequest ) "
                                    "returns ( .grpc.health.v1.HealthCheckResponse )"),
])
def test_grpcurl_describes_a_method_without_proto_files(stack: Stack, method: str,
                                                        signature: str) -> None:
    description = grpcurl(stack.grpc_target, "describe", method)
    assert description.startswith(f"{method} is a method:")
    assert signature in description


def test_grpcurl_describes_a_method_through_envoy(stack: Stack) -> None:
    description = grpcurl(f"127.0.0.1:{stack.rest_port}", "describe", f"{SERVICE}.GetSession")
    assert "rpc GetSession ( .shellexec.v1.GetSessionRequest )" in description


def test_grpcurl_still_reports_an_unknown_method(stack: Stack) -> None:
    done = subprocess.run([GRPCURL, "-plaintext", stack.grpc_target, "describe",
                           f"{SERVICE}.NoSuchMethod"], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "Symbol not found" in done.stderr


def test_grpcurl_calls_create_session_and_health(stack: Stack) -> None:
    created = json.loads(grpcurl("-d", '{"task_id": "grpcurl-task", "agent": "omp"}',
                                 stack.grpc_target, f"{SERVICE}/CreateSession"))
    assert created["session"]["task_id"] == "grpcurl-task"
    health = json.loads(grpcurl(stack.grpc_target, "grpc.health.v1.Health/Check"))
    assert health == {"status": "SERVING"}


@pytest.mark.slow
def test_grpcurl_watches_the_feed(stack: Stack) -> None:
    created = json.loads(grpcurl("-d", '{"task_id": "grpcurl-watch"}', stack.grpc_target,
                                 f"{SERVICE}/CreateSession"))
    session_id = created["session"]["id"]
    grpcurl("-d", json.dumps({"session_id": session_id, "update": {
        "sessionUpdate": "tool_call", "toolCallId": "c1", "kind": "execute",
        "title": "ls", "rawInput": {"command": "ls"}}}), stack.grpc_target,
            f"{SERVICE}/PublishUpdate")
    watched = subprocess.run(
        [GRPCURL, "-plaintext", "-max-time", "2", "-d",
         json.dumps({"session_id": session_id, "since_revision": 0}), stack.grpc_target,
         f"{SERVICE}/WatchMessages"], capture_output=True, text=True, timeout=30)
    assert '"type": "session.message.added"' in watched.stdout
    assert '"content": "ls"' in watched.stdout


def test_grpcurl_through_envoy_reaches_the_same_service(stack: Stack) -> None:
    front_door = f"127.0.0.1:{stack.rest_port}"
    health = json.loads(grpcurl(front_door, "grpc.health.v1.Health/Check"))
    assert health == {"status": "SERVING"}

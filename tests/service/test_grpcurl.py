"""The README's grpcurl commands, run with the real grpcurl binary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_grpcurl_calls_create_session_and_health(stack: Stack) -> None:
    created = json.loads(grpcurl("-d", '{"task_id": "grpcurl-task", "agent": "omp"}',
                                 stack.grpc_target, f"{SERVICE}/CreateSession"))
    assert created["session"]["task_id"] == "grpcurl-task"
    health = json.loads(grpcurl(stack.grpc_target, "grpc.health.v1.Health/Check"))
    assert health == {"status": "SERVING"}


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

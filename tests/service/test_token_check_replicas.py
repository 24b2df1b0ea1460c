"""With authentication on and two replicas (as `shellexec up --replicas 2` runs them: every
replica and the front door share one admin socket folder), a replica that is down fails no
request the other replica serves: the API cluster retries a refused connection on the other
replica (ADR 0116), and the token check cluster probes each socket and retries a check whose
connection fails on another server (ADR 0119)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from support.postgres import PostgresServer
from support.stack import Stack

# Round robin over two sockets: any two checks in a row reach both.
REQUESTS = 10


@pytest.fixture
def two_replicas(tmp_path: Path, postgres_server: PostgresServer) -> Iterator[list[Stack]]:
    """Two servers on one database and one front door, all with authentication on and one
    admin socket folder (the front door's), as `shellexec up --replicas 2` sets them up."""
    front = Stack(tmp_path / "front")
    shared = {"SHELLEXEC_DATABASE_URL": postgres_server.new_database(),
              "SHELLEXEC_AUTH": "on", "SHELLEXEC_ADMIN_SOCKET": str(front.admin_socket)}
    with ExitStack() as started:
        replicas = []
        for name in ("replica1", "replica2"):
            (tmp_path / name).mkdir()
            replica = Stack(tmp_path / name, extra_env=shared)
            started.callback(replica.stop)
            replica.start_server()
            replicas.append(replica)
        (tmp_path / "front").mkdir(exist_ok=True)
        front.extra_env = shared
        started.callback(front.stop)
        front.start_envoy(*(replica.grpc_port for replica in replicas))
        yield [front, *replicas]


def test_a_replica_that_is_down_fails_no_request_the_other_one_serves(
        two_replicas: list[Stack]) -> None:
    front, _, second = two_replicas
    api = front.api_as(front.create_token("reader", "read"))
    assert [api.request("GET", "/api/v1/task-sessions").status
            for _ in range(REQUESTS)] == [200] * REQUESTS
    second.kill_server()
    statuses = [api.request("GET", "/api/v1/task-sessions").status for _ in range(REQUESTS)]
    assert statuses == [200] * REQUESTS, statuses

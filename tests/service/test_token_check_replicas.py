"""With authentication on and two replicas (as `shellexec up --replicas 2` runs them: every
replica and the front door share one admin socket folder), a replica that is down fails no
request the other replica serves: the API cluster retries a refused connection on the other
replica (ADR 0116), and the token check cluster probes each socket and retries a check whose
connection fails on another server (ADR 0119)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psycopg
import pytest

from shellexec.app import admin_socket, token_check

from support.postgres import PostgresServer
from support.processes import wait_until
from support.stack import Stack

# Round robin over two sockets: any two checks in a row reach both.
REQUESTS = 10
# Bounds the wait for Envoy's probes (every second) to take a replica out of a pool.
READY_SECONDS = 30


@contextmanager
def _replicas(tmp_path: Path, *urls: str) -> Iterator[list[Stack]]:
    """A server on each database URL (one database, reached as the URLs say) and one front
    door, all with authentication on and one admin socket folder (the front door's), as
    `shellexec up --replicas 2` sets them up."""
    front = Stack(tmp_path / "front")
    shared = {"SHELLEXEC_AUTH": "on", "SHELLEXEC_ADMIN_SOCKET": str(front.admin_socket),
              "SHELLEXEC_DATABASE_URL": urls[0]}
    with ExitStack() as started:
        replicas = []
        for number, url in enumerate(urls, start=1):
            (tmp_path / f"replica{number}").mkdir()
            replica = Stack(tmp_path / f"replica{number}",
                            extra_env={**shared, "SHELLEXEC_DATABASE_URL": url})
            started.callback(replica.stop)
            replica.start_server()
            replicas.append(replica)
        (tmp_path / "front").mkdir(exist_ok=True)
        front.extra_env = shared
        started.callback(front.stop)
        front.start_envoy(*(replica.grpc_port for replica in replicas))
        yield [front, *replicas]


@pytest.fixture
def two_replicas(tmp_path: Path, postgres_server: PostgresServer) -> Iterator[list[Stack]]:
    url = postgres_server.new_database()
    with _replicas(tmp_path, url, url) as stacks:
        yield stacks


def test_a_replica_that_is_down_fails_no_request_the_other_one_serves(
        two_replicas: list[Stack]) -> None:
    front, _, second = two_replicas
    api = front.api_as(front.create_token("reader", "read"))
    assert [api.request("GET", "/api/v1/task-sessions").status
            for _ in range(REQUESTS)] == [200] * REQUESTS
    second.kill_server()
    statuses = [api.request("GET", "/api/v1/task-sessions").status for _ in range(REQUESTS)]
    assert statuses == [200] * REQUESTS, statuses


def _token_check_hosts_failing(front: Stack) -> set[str]:
    """The token check sockets Envoy's probes have taken out of the pool."""
    clusters = admin_socket.get_json(front.admin_socket, "/clusters?format=json") or {}
    return {host["address"]["pipe"]["path"]
            for cluster in clusters.get("cluster_statuses", ())
            if cluster["name"] == token_check.CLUSTER
            for host in cluster.get("host_statuses", ())
            if host.get("health_status", {}).get("failed_active_health_check")}


def test_a_replica_that_lost_its_database_leaves_the_token_check_pool(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    """The replicas share a database but not their way to it: one that cannot reach it while
    the other can answered every token check it got 503 (a third of the calls with three),
    since its probe said 200 whatever its readiness, while the gRPC pools had left it out.
    Here the second replica connects as a role of its own, which then loses CONNECT."""
    url = postgres_server.new_database()
    role = "second_replica"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT ALL ON SCHEMA public TO {role}")
        admin.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}")
        admin.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {role}")
    second_url = re.sub(r"://[^@/]*@", f"://{role}@", url, count=1)
    with _replicas(tmp_path, url, second_url) as (front, _, second):
        api = front.api_as(front.create_token("reader", "read"))
        assert [api.request("GET", "/api/v1/task-sessions").status
                for _ in range(REQUESTS)] == [200] * REQUESTS
        database = url.rsplit("/", 1)[1]
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'REVOKE CONNECT ON DATABASE "{database}" FROM PUBLIC')
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE usename = %s", (role,))
        second_socket = str(token_check.socket_path(front.admin_socket, second.grpc_port))
        assert wait_until(lambda: second_socket in _token_check_hosts_failing(front),
                          READY_SECONDS), "the replica without its database stayed in the pool"
        statuses = [api.request("GET", "/api/v1/task-sessions").status
                    for _ in range(REQUESTS)]
        assert statuses == [200] * REQUESTS, statuses

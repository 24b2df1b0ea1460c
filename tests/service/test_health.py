"""Liveness and readiness under their documented gRPC health service names: `liveness`, and
`""` and `shellexec.v1.ShellExecService` for readiness (the database file is there and has
every migration applied), asked with grpcurl and the Python health stub."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.store.migrations import SCHEMA_VERSION

from support.stack import Stack

GRPCURL = str(Path(sys.executable).parent / "grpcurl")
LIVENESS = "liveness"
READINESS = ("", "shellexec.v1.ShellExecService")
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def grpcurl_status(stack: Stack, service: str) -> str:
    done = subprocess.run([GRPCURL, "-plaintext", "-d", f'{{"service": "{service}"}}',
                           stack.grpc_target, "grpc.health.v1.Health/Check"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def check(stack: Stack, service: str) -> int:
    with grpc.insecure_channel(stack.grpc_target) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=10)
    status: int = answer.status
    return status


@contextmanager
def moved_away(database: Path) -> Iterator[None]:
    """The database file renamed away (the server's open connections keep the old one)."""
    aside = database.with_name("moved-away.db")
    database.rename(aside)
    try:
        yield
    finally:
        aside.rename(database)


@contextmanager
def last_migration_undone(stack: Stack) -> Iterator[None]:
    """The database's record of its last migration removed, as an older one would be."""
    stack.sql("DELETE FROM schema_version WHERE version = ?", SCHEMA_VERSION)
    try:
        yield
    finally:
        stack.sql("INSERT INTO schema_version (version, applied_at) VALUES (?, 0)",
                  SCHEMA_VERSION)


@pytest.fixture
def own(stack_with: Callable[..., Stack]) -> Stack:
    # An hour between periodic checks: what these tests see comes from Check itself.
    return stack_with(SHELLEXEC_READINESS_CHECK_SECONDS="3600")


@pytest.mark.parametrize("service", [LIVENESS, *READINESS])
def test_a_running_server_is_live_and_ready(stack: Stack, service: str) -> None:
    assert '"status": "SERVING"' in grpcurl_status(stack, service)
    assert check(stack, service) == SERVING


def test_an_unknown_service_name_is_not_found(stack: Stack) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        check(stack, "readiness-typo")
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.sqlite_only
def test_a_missing_database_file_is_not_ready_but_live(own: Stack) -> None:
    database = own.workdir / "shellexec.db"
    with moved_away(database):
        for service in READINESS:
            assert check(own, service) == NOT_SERVING
            assert '"status": "NOT_SERVING"' in grpcurl_status(own, service)
        assert check(own, LIVENESS) == SERVING
    assert [check(own, service) for service in READINESS] == [SERVING, SERVING]


def test_a_database_missing_a_migration_is_not_ready(own: Stack) -> None:
    with last_migration_undone(own):
        assert check(own, "") == NOT_SERVING
        assert check(own, LIVENESS) == SERVING
    assert check(own, "") == SERVING


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_watchers_of_readiness_hear_the_periodic_check(stack_with: Callable[..., Stack]
                                                       ) -> None:
    watched = stack_with(SHELLEXEC_READINESS_CHECK_SECONDS="0.2")
    database = watched.workdir / "shellexec.db"
    with grpc.insecure_channel(watched.grpc_target) as channel:
        answers = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service=""), timeout=30)
        assert next(answers).status == SERVING
        with moved_away(database):
            assert next(answers).status == NOT_SERVING
        assert next(answers).status == SERVING
        answers.cancel()

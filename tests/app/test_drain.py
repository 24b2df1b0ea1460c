"""A server stopped by SIGTERM with a drain (SHELLEXEC_DRAIN_SECONDS, which `up` gives its
replicas) says NOT_SERVING and keeps serving for the drain, so that a balancer's health checks
hear it before it stops taking calls: Envoy checks each replica once a second, and a call it
sent to a stopping replica meanwhile was cancelled, unretried (a probe: 12 failed calls in 51
rolling restarts under load). SIGINT, which `up` sends when it stops every replica together,
and a second signal stop at once."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.client import ShellExecClient

from support.stack import Stack

NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
# Far longer than the test takes: a server that drains is seen draining, never timed.
DRAIN_SECONDS = "60"
TIMEOUT = 30


@contextmanager
def draining_server(tmp_path: Path) -> Iterator[tuple[Stack, ShellExecClient, str]]:
    stack = Stack(tmp_path, extra_env={"SHELLEXEC_DRAIN_SECONDS": DRAIN_SECONDS,
                                       "SHELLEXEC_HEARTBEAT_SECONDS": "60"})
    stack.start_server()
    try:
        with stack.client() as client:
            yield stack, client, client.create_session("drained").id
    finally:
        stack.stop()


def not_serving_after(stack: Stack, sig: signal.Signals) -> None:
    """Sends `sig` and returns once readiness says NOT_SERVING."""
    assert stack.server is not None
    with grpc.insecure_channel(stack.grpc_target) as channel:
        statuses = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT)
        assert next(statuses).status == health_pb2.HealthCheckResponse.SERVING
        stack.server.send_signal(sig)
        assert next(statuses).status == NOT_SERVING
        statuses.cancel()


def test_sigterm_keeps_serving_for_the_drain_and_a_second_signal_ends_it(
        tmp_path: Path) -> None:
    with draining_server(tmp_path) as (stack, client, session_id):
        assert stack.server is not None
        not_serving_after(stack, signal.SIGTERM)
        assert client.get_session(session_id).id == session_id  # still served
        assert stack.server.poll() is None
        stack.server.send_signal(signal.SIGINT)
        assert stack.server.wait(timeout=TIMEOUT) == 0
        assert "Traceback" not in (tmp_path / "server.log").read_text()


def test_sigint_stops_at_once_whatever_the_drain(tmp_path: Path) -> None:
    with draining_server(tmp_path) as (stack, _, _):
        assert stack.server is not None
        not_serving_after(stack, signal.SIGINT)
        assert stack.server.wait(timeout=TIMEOUT) == 0

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
import pytest
import yaml  # type: ignore[import-untyped]
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.app.envoy import render
from shellexec.app.health import STOPPING
from shellexec.app.settings import Settings
from shellexec.client import ShellExecClient

from support.stack import Stack

NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
# Far longer than the test takes: a server that drains is seen draining, never timed.
DRAIN_SECONDS = "60"
TIMEOUT = 30
# What `up` makes for a run: the front door marks the checks it passes on with it.
PROBE_SECRET = "probe-secret-of-these-tests-0123456789"


@contextmanager
def draining_server(tmp_path: Path, front_door: bool = False
                    ) -> Iterator[tuple[Stack, ShellExecClient, str]]:
    stack = Stack(tmp_path, extra_env={"SHELLEXEC_DRAIN_SECONDS": DRAIN_SECONDS,
                                       "SHELLEXEC_HEARTBEAT_SECONDS": "60",
                                       "SHELLEXEC_PROBE_SECRET": PROBE_SECRET})
    stack.start_server()
    if front_door:
        stack.start_envoy(stack.grpc_port)
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


def test_a_stopping_server_answers_the_front_door_s_checks_unavailable(tmp_path: Path) -> None:
    """While one replica drains, the front door's clients' probes heard its NOT_SERVING, a
    liveness probe's "restart it", though the other replicas served. A stopping server
    answers the checks the front door marked UNAVAILABLE, which the front door asks of
    another replica (here there is none, so the client hears UNAVAILABLE); its own port's
    probes still hear NOT_SERVING."""
    with draining_server(tmp_path, front_door=True) as (stack, _, _):
        not_serving_after(stack, signal.SIGTERM)
        with grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}") as front_door:
            for service in ("liveness", ""):
                with pytest.raises(grpc.RpcError) as refused:
                    health_pb2_grpc.HealthStub(front_door).Check(
                        health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
                assert refused.value.details() == STOPPING
        with grpc.insecure_channel(stack.grpc_target) as direct:
            assert health_pb2_grpc.HealthStub(direct).Check(
                health_pb2.HealthCheckRequest(service="liveness"),
                timeout=TIMEOUT).status == NOT_SERVING


def test_the_front_door_asks_another_replica_when_a_check_is_unavailable() -> None:
    """The other half of the above: the health check's route retries UNAVAILABLE (and a
    refused connection or stream) on a replica it has not asked yet."""
    rendered = yaml.safe_load(render(Settings(probe_secret=PROBE_SECRET), 50051, 50052))
    manager = rendered["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    routes = manager["typed_config"]["route_config"]["virtual_hosts"][0]["routes"]
    check = next(route for route in routes
                 if route["match"].get("path") == "/grpc.health.v1.Health/Check"
                 and "route" in route)
    retry = check["route"]["retry_policy"]
    assert "unavailable" in retry["retry_on"].split(",")
    assert retry["num_retries"] >= 1
    assert [predicate["name"] for predicate in retry["retry_host_predicate"]] == [
        "envoy.retry_host_predicates.previous_hosts"]

"""A stopping server with a drain (SHELLEXEC_DRAIN_SECONDS, which `up` gives its replicas) says
NOT_SERVING and keeps serving until a readiness check has heard it: Envoy checks each replica
once a second, and a call it sent to a stopping replica before hearing was cancelled, and not
retried (a probe: 12 failed calls in 51 rolling restarts under load)."""

from __future__ import annotations

import signal
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from support.stack import Stack

NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
TIMEOUT = 30


def test_a_draining_server_serves_until_a_readiness_check_heard_it_stop(tmp_path: Path) -> None:
    stack = Stack(tmp_path, extra_env={"SHELLEXEC_DRAIN_SECONDS": "60",
                                       "SHELLEXEC_HEARTBEAT_SECONDS": "60"})
    stack.start_server()
    try:
        assert stack.server is not None
        with stack.client() as client, grpc.insecure_channel(stack.grpc_target) as channel:
            session = client.create_session("drained")
            health = health_pb2_grpc.HealthStub(channel)
            # Watch, unlike Check, is not a balancer's check: it does not end the drain.
            statuses = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT)
            assert next(statuses).status == health_pb2.HealthCheckResponse.SERVING
            stack.server.send_signal(signal.SIGTERM)
            assert next(statuses).status == NOT_SERVING
            statuses.cancel()

            assert client.get_session(session.id).id == session.id  # still served
            assert stack.server.poll() is None
            answer = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT)
            assert answer.status == NOT_SERVING
        assert stack.server.wait(timeout=TIMEOUT) == 0  # heard: it stops
        assert "Traceback" not in (tmp_path / "server.log").read_text()
    finally:
        stack.stop()


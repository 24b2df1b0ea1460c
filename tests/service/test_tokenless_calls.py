"""With authentication on, the open services (health, reflection) need no token, and the
server runs a bounded number of their streams without one at once (MAX_TOKENLESS_CALLS):
5,120 tokenless health watches took every call the server may run, and every token holder's
call failed. A stream that carries a valid token is its token's, outside that bound, and so
is the front door's probe, which carries the probe secret; a health check, answered at once,
is never counted (ADR 0140)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.api.auth import PROBE_HEADER
from shellexec.client import ShellExecClient
from shellexec.rules.limits import MAX_TOKENLESS_CALLS, MESSAGE_ARRIVAL_SECONDS

from support.health import tokenless_line_held
from support.processes import wait_until
from support.stack import Stack, running_stack

SERVING = health_pb2.HealthCheckResponse.SERVING
# Bounds each call: the calls refused here are refused at once.
CALL_SECONDS = 10


# The secret the front door's health checks of the replicas carry (`up --replicas` makes one).
PROBE_SECRET = "probe-secret-of-these-tests-0123456789"


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[Stack]:
    with running_stack(tmp_path, SHELLEXEC_AUTH="on", SHELLEXEC_LOG="errors",
                       SHELLEXEC_PROBE_SECRET=PROBE_SECRET) as stack:
        yield stack


def check(channel: grpc.Channel, token: str | None = None) -> int:
    metadata = [] if token is None else [("authorization", f"Bearer {token}")]
    answer = health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=""), timeout=CALL_SECONDS, metadata=metadata)
    return int(answer.status)


def watch(channel: grpc.Channel, token: str | None = None,
          probe: str | None = None) -> Iterator[health_pb2.HealthCheckResponse]:
    metadata = [] if token is None else [("authorization", f"Bearer {token}")]
    if probe is not None:
        metadata.append((PROBE_HEADER, probe))
    return iter(health_pb2_grpc.HealthStub(channel).Watch(
        health_pb2.HealthCheckRequest(service=""), metadata=metadata))


def test_tokenless_streams_past_their_bound_are_refused_and_others_are_served(
        secured: Stack) -> None:
    token = secured.create_token("holder", "admin")
    with grpc.insecure_channel(secured.grpc_target) as channel:
        watches = [watch(channel) for _ in range(MAX_TOKENLESS_CALLS)]
        held = []
        try:
            assert {next(each).status for each in watches} == {SERVING}
            with pytest.raises(grpc.RpcError) as refused:
                next(watch(channel))
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "without a valid token" in (refused.value.details() or "")
            # A probe's health check is answered at once: not counted, and never refused.
            assert check(channel) == SERVING
            # A token holder's stream is its token's, and so is the front door's probe's,
            # which carries the probe secret (only that one: a guess is one more tokenless).
            held = [watch(channel, token=token), watch(channel, probe=PROBE_SECRET)]
            assert [next(each).status for each in held] == [SERVING, SERVING]
            with pytest.raises(grpc.RpcError) as guessed:
                next(watch(channel, probe=PROBE_SECRET[:-1] + "x"))
            assert guessed.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            with ShellExecClient(secured.grpc_target, token=token) as client:
                session = client.create_session("tokenless-bound")
                assert client.get_session(session.id).id == session.id
        finally:
            for each in [*watches, *held]:
                each.cancel()  # type: ignore[attr-defined]
        # The bound counts streams while they run: once they end, another is served.
        assert wait_until(lambda: _served(channel), CALL_SECONDS)


def _served(channel: grpc.Channel) -> bool:
    try:
        return bool(next(watch(channel)).status == SERVING)
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
            raise
        return False


def test_health_checks_through_the_front_door_have_a_line_of_their_own(
        secured: Stack) -> None:
    """Four health checks on the gRPC port that never send their message fill the line of
    the calls without a token for 20 s: the front door's clients' checks, which carry no
    token, waited there too. The front door now marks them with the run's secret."""
    with (grpc.insecure_channel(secured.grpc_target) as direct,
          grpc.insecure_channel(f"127.0.0.1:{secured.rest_port}") as front_door,
          tokenless_line_held(direct)):
        # Well within the held checks' 20 s: only a line of its own serves it now.
        assert health_pb2_grpc.HealthStub(front_door).Check(
            health_pb2.HealthCheckRequest(service=""),
            timeout=MESSAGE_ARRIVAL_SECONDS / 4).status == SERVING

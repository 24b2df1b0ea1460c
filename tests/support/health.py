"""Health checks that hold a server's request budget: its line of the calls without a token
(ADR 0140)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.rules.limits import MAX_GRPC_MESSAGE_BYTES, REQUEST_BUDGET_BYTES_PER_CALLER

CHECK = "/grpc.health.v1.Health/Check"
# What fills the line: each check reserves a whole message's worth until its message comes.
CHECKS_THAT_FILL_A_LINE = REQUEST_BUDGET_BYTES_PER_CALLER // MAX_GRPC_MESSAGE_BYTES


@contextmanager
def tokenless_line_held(channel: grpc.Channel) -> Iterator[None]:
    """Holds the line of the calls without a token of the server behind `channel` with health
    checks that send their headers and never their message (for at most the server's 20 s of
    MESSAGE_ARRIVAL_SECONDS), and checks that a tokenless health check then waits."""
    never = threading.Event()

    def no_message() -> Iterator[bytes]:
        never.wait()
        yield b""

    check = channel.stream_unary(CHECK)
    held = [check.future(no_message()) for _ in range(CHECKS_THAT_FILL_A_LINE)]
    try:
        with pytest.raises(grpc.RpcError) as waited:
            health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=1)
        assert waited.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED, waited.value
        yield
    finally:
        never.set()
        for call in held:
            call.cancel()

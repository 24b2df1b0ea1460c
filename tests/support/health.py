"""Health checks that hold a server's request budget: its line of the calls without a token
(ADR 0140)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.rules.limits import (
    MAX_GRPC_MESSAGE_BYTES,
    MESSAGE_ARRIVAL_SECONDS,
    REQUEST_BUDGET_BYTES_PER_CALLER,
)

from support.processes import wait_until

CHECK = "/grpc.health.v1.Health/Check"
# What fills the line: each check reserves a whole message's worth until its message comes.
CHECKS_THAT_FILL_A_LINE = REQUEST_BUDGET_BYTES_PER_CALLER // MAX_GRPC_MESSAGE_BYTES


def _waits(channel: grpc.Channel) -> bool:
    """Whether a tokenless health check waits past its deadline of 1 s."""
    try:
        health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=1)
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
            raise
        return True
    return False


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
        # The held checks start on the channel's own threads: a check sent now may reach the
        # server first and be answered. Once they are admitted, every check waits.
        assert wait_until(lambda: _waits(channel), MESSAGE_ARRIVAL_SECONDS / 2)
        yield
    finally:
        never.set()
        for call in held:
            call.cancel()

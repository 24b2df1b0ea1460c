"""The server's own gRPC port holds at most MAX_GRPC_CONNECTIONS connections at once: the next
is closed as it is accepted, and a closed one makes room again. Counted, not timed: the test
holds connections open and polls (bounded) for the room a closed one gives back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.app import server as server_module
from shellexec.app.server import start_server
from shellexec.app.settings import Settings
from shellexec.rules.limits import MAX_GRPC_CONNECTIONS

BOUND = 3
OPTION = "grpc.max_allowed_incoming_connections"


def test_the_server_options_bound_connections() -> None:
    assert (OPTION, MAX_GRPC_CONNECTIONS) in server_module._SERVER_OPTIONS


async def _check(port: int) -> tuple[grpc.aio.Channel, str]:
    """A channel of its own (its own connection), and its one health check's status."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}",
                                        options=[("grpc.use_local_subchannel_pool", 1)])
    try:
        await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                        timeout=10)
        return channel, "OK"
    except grpc.aio.AioRpcError as error:
        return channel, error.code().name


def test_one_connection_past_the_bound_is_refused_until_one_closes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options = tuple(option for option in server_module._SERVER_OPTIONS if option[0] != OPTION)
    monkeypatch.setattr(server_module, "_SERVER_OPTIONS", (*options, (OPTION, BOUND)))
    settings = Settings(grpc_address="127.0.0.1:0", metrics_port=0,
                        database_url=f"sqlite:///{tmp_path / 'bound.db'}")

    async def scenario() -> None:
        running = await start_server(settings)
        held = []
        try:
            for _ in range(BOUND):
                channel, status = await _check(running.port)
                held.append(channel)
                assert status == "OK"
            extra, status = await _check(running.port)
            await extra.close()
            assert status == "UNAVAILABLE"
            await held.pop().close()
            for _ in range(100):  # the server hears the close within a turn or two
                channel, status = await _check(running.port)
                await channel.close()
                if status == "OK":
                    break
                await asyncio.sleep(0.05)
            assert status == "OK"
        finally:
            for channel in held:
                await channel.close()
            await running.stop(grace=0)

    asyncio.run(scenario())

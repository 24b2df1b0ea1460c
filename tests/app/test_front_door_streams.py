"""One client connection carries at most FRONT_DOOR_STREAMS_PER_CONNECTION streams at once
through the front door (ADR 0135), where Envoy's default allowed 2^31 - 1.

Envoy announces the limit in its HTTP/2 SETTINGS, and client libraries (gRPC, browsers) wait
for a stream to end before opening one more: seen here on a bare connection, which also shows
that the streams within the limit are all held, and that a client opening one past it anyway
loses its connection (Envoy treats it as a protocol error), not the other clients theirs.
The streams are REST requests whose body never comes, which Envoy holds without passing them
on, so nothing here reaches the server."""

from __future__ import annotations

import pytest

from shellexec.rules.limits import FRONT_DOOR_STREAMS_PER_CONNECTION

from support import http2
from support.stack import Stack

# The server's engine plays no part here.
pytestmark = pytest.mark.sqlite_only


def _held_request(stack: Stack) -> list[tuple[str, str]]:
    """A REST request whose headers announce a body that is never sent."""
    return [(":method", "POST"), (":scheme", "http"), (":path", "/api/v1/task-sessions"),
            (":authority", f"127.0.0.1:{stack.rest_port}"), ("content-type", "application/json")]


def _settings(connection: http2.Connection) -> dict[int, int]:
    while (frame := connection.receive()).type != http2.SETTINGS or frame.flags & http2.ACK:
        pass
    return frame.settings()


def _until_ping_answered(connection: http2.Connection) -> list[http2.Frame]:
    """The frames Envoy sends before it answers a PING sent now (frames it sent in reply to
    earlier ones come first)."""
    connection.send(http2.PING, 0, 0, b"streams!")
    frames = []
    while not ((frame := connection.receive()).type == http2.PING and frame.flags & http2.ACK):
        frames.append(frame)
    return frames


def _ends(connection: http2.Connection) -> None:
    """Returns once Envoy ends the connection, with a GOAWAY or by closing it (a socket
    timeout fails the test instead)."""
    try:
        while connection.receive().type != http2.GOAWAY:
            pass
    except ConnectionError:
        pass


def test_envoy_announces_the_limit(stack: Stack) -> None:
    with http2.Connection("127.0.0.1", stack.rest_port) as connection:
        settings = _settings(connection)
    assert settings[http2.SETTINGS_MAX_CONCURRENT_STREAMS] == FRONT_DOOR_STREAMS_PER_CONNECTION


def test_streams_within_the_limit_are_held_and_one_past_it_costs_its_connection(
        stack: Stack) -> None:
    with http2.Connection("127.0.0.1", stack.rest_port) as connection:
        _settings(connection)
        stream_ids = [2 * index + 1 for index in range(FRONT_DOOR_STREAMS_PER_CONNECTION)]
        for stream_id in stream_ids:
            connection.send_headers(stream_id, _held_request(stack), end_stream=False)
        # Every stream is open: none was reset or answered.
        assert [frame for frame in _until_ping_answered(connection)
                if frame.stream_id in stream_ids] == []

        with http2.Connection("127.0.0.1", stack.rest_port) as bystander:
            _settings(bystander)
            connection.send_headers(stream_ids[-1] + 2, _held_request(stack), end_stream=False)
            _ends(connection)
            # Another client's connection is untouched, and new ones are served.
            assert http2.GOAWAY not in [frame.type for frame in _until_ping_answered(bystander)]
            assert stack.api.request("GET", "/api/v1/openapi.json").status == 200

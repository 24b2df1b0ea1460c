"""Free ports are drawn below the kernel's ephemeral range, so that no outgoing connection can
take one between the pick and the listener's bind (a replica's port, the local PostgreSQL's,
a test stack's), and they are never a port already in use or picked in the same call."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from shellexec.app import ports

HOST = "127.0.0.1"


@contextmanager
def outgoing_connection() -> Iterator[int]:
    """An established loopback connection; yields the local port the kernel gave it."""
    with socket.socket() as server, socket.socket() as client:
        server.bind((HOST, 0))
        server.listen()
        client.connect(server.getsockname())
        accepted, _ = server.accept()
        with accepted:
            yield int(client.getsockname()[1])


def test_free_ports_lie_below_the_ephemeral_range() -> None:
    ephemeral = ports.ephemeral_range(ports.EPHEMERAL_RANGE)
    if ephemeral is None:
        pytest.skip("this system publishes no ephemeral port range")
    with outgoing_connection() as taken_by_a_connection:
        assert ephemeral[0] <= taken_by_a_connection <= ephemeral[1]
        picked = ports.free_ports(HOST, 50)
    assert all(ports.FIRST_QUIET_PORT <= port < ephemeral[0] for port in picked)


def test_a_picked_port_can_be_listened_on_at_once() -> None:
    for port in ports.free_ports(HOST, 5):
        with socket.socket() as listener:
            listener.bind((HOST, port))  # no SO_REUSEADDR: any holder would refuse this
            listener.listen()


def test_one_call_never_picks_the_same_port_twice() -> None:
    picked = ports.free_ports(HOST, 200)
    assert len(set(picked)) == len(picked)


def test_a_port_in_use_or_to_avoid_is_never_picked(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    # A range file leaving exactly three quiet ports below it: one listened on, one to avoid.
    published = tmp_path / "ip_local_port_range"
    first = ports.FIRST_QUIET_PORT + ports.MIN_QUIET_PORTS + 20000
    published.write_text(f"{first + 3}\t60999\n")
    monkeypatch.setattr(ports, "EPHEMERAL_RANGE", published)
    monkeypatch.setattr(ports, "QUIET_PORTS", 3)
    with socket.socket() as holder, socket.socket() as other:
        try:
            holder.bind((HOST, first))
            other.bind((HOST, first + 1))  # released at once: it must be free, not in use
        except OSError:
            pytest.skip(f"port {first} or {first + 1} is taken on this machine")
        other.close()
        holder.listen()
        assert ports.free_ports(HOST, 1, avoid={first + 2}) == [first + 1]
        with pytest.raises(ports.PortInUseError, match="found only 1 of 2 free ports"):
            ports.free_ports(HOST, 2, avoid={first + 2})


def test_without_a_published_range_the_system_chooses(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setattr(ports, "EPHEMERAL_RANGE", tmp_path / "missing")
    picked = ports.free_ports(HOST, 3)
    assert len(set(picked)) == 3
    for port in picked:
        with socket.socket() as listener:
            listener.bind((HOST, port))

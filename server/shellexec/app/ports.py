"""Start-up checks of the ports a command is about to listen on, with messages naming them.

Every listener binds exclusively (no SO_REUSEPORT), so a second instance fails instead of
silently sharing a port; these checks run first so that the failure reads as a sentence a
user can act on, not as a library's bind error, and before anything prints a banner.
"""

from __future__ import annotations

import errno
import random
import socket
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.api import SERVICE_NAME

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Free ports are drawn from the QUIET_PORTS just below the ephemeral range, never from the
# privileged ones, and only when at least MIN_QUIET_PORTS are there to draw from.
FIRST_QUIET_PORT = 1024
QUIET_PORTS = 16384
MIN_QUIET_PORTS = 1024
TRIES_PER_PORT = 1000
MAX_PORT = 65_535


class PortInUseError(RuntimeError):
    """A port this command must listen on is taken, or its address cannot be bound; the
    message says which and what to do."""


@dataclass(frozen=True, slots=True)
class Listener:
    """One address a command listens on, and the setting that moves it."""

    role: str
    host: str
    port: int
    setting: str


def split_address(address: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) as a host and a port number."""
    host, _, port = address.rpartition(":")
    return host.strip("[]") or "0.0.0.0", int(port)


def is_in_use(host: str, port: int) -> bool:
    """Whether something listens on host:port (a connection in TIME_WAIT does not count).
    OSError when the address cannot be bound for another reason (not this machine's, say)."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def shellexec_answers(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether a shellexec server answers gRPC health checks on host:port."""
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return answers_health_checks(f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
                                 timeout)


def answers_health_checks(target: str, timeout: float) -> bool:
    """Whether a shellexec server answers a gRPC health check on `target` (serving or not)."""
    with grpc.insecure_channel(target) as channel:
        try:
            health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=timeout)
        except grpc.RpcError:
            return False
    return True


def wait_answering(target: str, timeout: float, still_starting: Callable[[], bool]) -> bool:
    """Waits until a server answers health checks on `target`; False after `timeout` seconds
    or as soon as `still_starting()` says it no longer is (its process exited).

    One health check at a time, never `grpc.channel_ready_future`: that watches the channel
    from a thread of its own, which raises into whatever runs next when the channel closes
    while it watches."""
    deadline = time.monotonic() + timeout
    while still_starting():
        if answers_health_checks(target, timeout=0.5):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return False


def ensure_free(grpc_listener: Listener, *others: Listener) -> None:
    """Raises PortInUseError naming the first listener whose port is taken (port 0 picks a
    free port and is never checked)."""
    if grpc_listener.port and _in_use(grpc_listener):
        if shellexec_answers(grpc_listener.host, grpc_listener.port):
            raise PortInUseError(
                f"another shellexec is already running on port {grpc_listener.port}: stop it "
                f"first (Ctrl-C where it runs), or choose other ports with "
                f"{grpc_listener.setting}"
                + "".join(f", {other.setting}" for other in others))
        raise _taken(grpc_listener)
    for listener in others:
        if listener.port and _in_use(listener):
            raise _taken(listener)


def _in_use(listener: Listener) -> bool:
    try:
        return is_in_use(listener.host, listener.port)
    except OSError as error:
        raise PortInUseError(
            f"cannot listen on {listener.host}:{listener.port} ({listener.role}): "
            f"{error.strerror or error}; check {listener.setting} and the host beside it"
        ) from None


def _taken(listener: Listener) -> PortInUseError:
    return PortInUseError(
        f"port {listener.port} ({listener.role}) on {listener.host} is already in use by "
        f"another program, perhaps another shellexec: stop it, or choose another port with "
        f"{listener.setting}")


def free_ports(host: str, count: int, avoid: Collection[int] = ()) -> list[int]:
    """`count` different ports on `host` that nothing uses now and that are not in `avoid`,
    chosen below the kernel's ephemeral range where it leaves room (the system's choice
    otherwise).

    A port the kernel picks for bind(0) lies in the range it also gives outgoing connections,
    so between our pick and the listener's bind any connection (to PostgreSQL, Envoy probing a
    replica) may take it, and a replica restarting on its port may find it gone; the kernel
    never hands out a port below that range on its own.
    """
    chosen: list[int] = []
    for _ in range(count * TRIES_PER_PORT):
        port = _candidate(host)
        if port not in chosen and port not in avoid and not _is_bound(host, port):
            chosen.append(port)
        if len(chosen) == count:
            return chosen
    raise PortInUseError(f"found only {len(chosen)} of {count} free ports on {host}")


def free_port(host: str) -> int:
    """One port on `host` that nothing uses now (see free_ports)."""
    return free_ports(host, 1)[0]


def ephemeral_range(path: Path) -> tuple[int, int] | None:
    """The kernel's range of ports for outgoing connections (None where it is not published)."""
    try:
        low, high = path.read_text().split()
    except (OSError, ValueError):
        return None
    return int(low), int(high)


def _candidate(host: str) -> int:
    ephemeral = ephemeral_range(EPHEMERAL_RANGE)
    if ephemeral is None or ephemeral[0] - FIRST_QUIET_PORT < MIN_QUIET_PORTS:
        with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            return int(sock.getsockname()[1])
    return random.randrange(max(FIRST_QUIET_PORT, ephemeral[0] - QUIET_PORTS), ephemeral[0])


def _is_bound(host: str, port: int) -> bool:
    """Whether any socket (listening, connected or closing) holds host:port; stricter than
    is_in_use, which lets a TIME_WAIT connection through."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET

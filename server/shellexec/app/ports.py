"""Start-up checks of the ports a command is about to listen on, with messages naming them.

Every listener binds exclusively (no SO_REUSEPORT), so a second instance fails instead of
silently sharing a port; these checks run first so that the failure reads as a sentence a
user can act on, not as a library's bind error, and before anything prints a banner.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shellexec.api import SERVICE_NAME


class PortInUseError(RuntimeError):
    """A port this command must listen on is taken; the message says which and what to do."""


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
    """Whether something listens on host:port (a connection in TIME_WAIT does not count)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def shellexec_answers(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether a shellexec server answers gRPC health checks on host:port."""
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    with grpc.insecure_channel(target) as channel:
        try:
            health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=timeout)
        except grpc.RpcError:
            return False
    return True


def ensure_free(grpc_listener: Listener, *others: Listener) -> None:
    """Raises PortInUseError naming the first listener whose port is taken (port 0 picks a
    free port and is never checked)."""
    if grpc_listener.port and is_in_use(grpc_listener.host, grpc_listener.port):
        if shellexec_answers(grpc_listener.host, grpc_listener.port):
            raise PortInUseError(
                f"shellexec is already running on port {grpc_listener.port}: stop it first "
                f"(Ctrl-C where it runs), or choose other ports with {grpc_listener.setting}"
                + "".join(f", {other.setting}" for other in others))
        raise _taken(grpc_listener)
    for listener in others:
        if listener.port and is_in_use(listener.host, listener.port):
            raise _taken(listener)


def _taken(listener: Listener) -> PortInUseError:
    return PortInUseError(
        f"port {listener.port} ({listener.role}) on {listener.host} is already in use by "
        f"another program, perhaps another shellexec: stop it, or choose another port with "
        f"{listener.setting}")


def free_port(host: str) -> int:
    """A port on `host` that nothing listens on now (the system's choice)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])

"""Run-time settings, read from SHELLEXEC_* environment variables with documented defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from shellexec.api.call_log import LOG_CALLS, LogLevel, log_level


def _split(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the service and its front door need to start."""

    # Where the gRPC server listens (host:port; port 0 picks a free one).
    grpc_address: str = "127.0.0.1:50051"
    # The REST/gRPC-Web front door (Envoy).
    rest_host: str = "127.0.0.1"
    rest_port: int = 8080
    # Envoy's admin interface: a Unix socket in a private folder, never a TCP port (ADR 0056).
    admin_socket: str = ".run/envoy/admin.sock"
    # Host values the front door answers besides the loopback names (ADR 0055).
    allowed_hosts: tuple[str, ...] = field(default_factory=tuple)
    # sqlite:///PATH (relative to the working directory) or sqlite:////ABSOLUTE/PATH.
    database_url: str = "sqlite:///data/shellexec.db"
    # Origins allowed by CORS (and past the browser boundary); the page is same-origin.
    cors_origins: tuple[str, ...] = field(default_factory=tuple)
    # Feed heartbeat interval and the lifetime after which a stream ends (clients resume).
    heartbeat_seconds: float = 15.0
    stream_lifetime_seconds: float = 300.0
    # Seconds a stopping server lets running calls finish.
    shutdown_grace_seconds: float = 5.0
    # Registers `/shellexec.bench.Echo/Echo`, a raw-bytes echo the benchmarks compare against.
    bench_echo: bool = False
    # Which calls the server logs to stderr, one JSON line each: `calls`, `errors` or `off`.
    log: LogLevel = LOG_CALLS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        default = cls()
        return cls(
            grpc_address=env.get("SHELLEXEC_GRPC_ADDRESS", default.grpc_address),
            rest_host=env.get("SHELLEXEC_REST_HOST", default.rest_host),
            rest_port=int(env.get("SHELLEXEC_REST_PORT", default.rest_port)),
            admin_socket=env.get("SHELLEXEC_ADMIN_SOCKET", default.admin_socket),
            allowed_hosts=_split(env.get("SHELLEXEC_ALLOWED_HOSTS", "")),
            database_url=env.get("SHELLEXEC_DATABASE_URL", default.database_url),
            cors_origins=_split(env.get("SHELLEXEC_CORS_ORIGINS", "")),
            heartbeat_seconds=float(env.get("SHELLEXEC_HEARTBEAT_SECONDS",
                                            default.heartbeat_seconds)),
            stream_lifetime_seconds=float(env.get("SHELLEXEC_STREAM_LIFETIME_SECONDS",
                                                  default.stream_lifetime_seconds)),
            shutdown_grace_seconds=float(env.get("SHELLEXEC_SHUTDOWN_GRACE_SECONDS",
                                                 default.shutdown_grace_seconds)),
            bench_echo=env.get("SHELLEXEC_BENCH_ECHO", "") == "1",
            log=log_level(env.get("SHELLEXEC_LOG", default.log)),
        )

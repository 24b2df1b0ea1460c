"""Run-time settings, read from SHELLEXEC_* environment variables with documented defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field


def _split(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the service and its front door need to start."""

    # Where the gRPC server listens (host:port; port 0 picks a free one).
    grpc_address: str = "127.0.0.1:50051"
    # The REST/gRPC-Web front door (Envoy) and its admin interface (always loopback).
    rest_host: str = "127.0.0.1"
    rest_port: int = 8080
    admin_port: int = 9901
    # sqlite:///PATH (relative to the working directory) or sqlite:////ABSOLUTE/PATH.
    database_url: str = "sqlite:///data/shellexec.db"
    # Origins allowed by CORS; the web page is same-origin and needs none.
    cors_origins: tuple[str, ...] = field(default_factory=tuple)
    # Feed heartbeat interval and the lifetime after which a stream ends (clients resume).
    heartbeat_seconds: float = 15.0
    stream_lifetime_seconds: float = 300.0
    # Seconds a stopping server lets running calls finish.
    shutdown_grace_seconds: float = 5.0
    # Memory (bench/memory_bound.py holds the server under 150 MB with these): the SQLite
    # page cache of each of the four database connections, in KiB; how many MiB of output
    # bodies the fold states kept in memory between updates may hold; and how many sessions'
    # facts are remembered.
    db_cache_kib: int = 8 * 1024
    state_cache_mib: int = 32
    known_sessions: int = 4096
    # Registers `/shellexec.bench.Echo/Echo`, a raw-bytes echo the benchmarks compare against.
    bench_echo: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        default = cls()
        return cls(
            grpc_address=env.get("SHELLEXEC_GRPC_ADDRESS", default.grpc_address),
            rest_host=env.get("SHELLEXEC_REST_HOST", default.rest_host),
            rest_port=int(env.get("SHELLEXEC_REST_PORT", default.rest_port)),
            admin_port=int(env.get("SHELLEXEC_ADMIN_PORT", default.admin_port)),
            database_url=env.get("SHELLEXEC_DATABASE_URL", default.database_url),
            cors_origins=_split(env.get("SHELLEXEC_CORS_ORIGINS", "")),
            heartbeat_seconds=float(env.get("SHELLEXEC_HEARTBEAT_SECONDS",
                                            default.heartbeat_seconds)),
            stream_lifetime_seconds=float(env.get("SHELLEXEC_STREAM_LIFETIME_SECONDS",
                                                  default.stream_lifetime_seconds)),
            shutdown_grace_seconds=float(env.get("SHELLEXEC_SHUTDOWN_GRACE_SECONDS",
                                                 default.shutdown_grace_seconds)),
            db_cache_kib=int(env.get("SHELLEXEC_DB_CACHE_KIB", default.db_cache_kib)),
            state_cache_mib=int(env.get("SHELLEXEC_STATE_CACHE_MIB", default.state_cache_mib)),
            known_sessions=int(env.get("SHELLEXEC_KNOWN_SESSIONS", default.known_sessions)),
            bench_echo=env.get("SHELLEXEC_BENCH_ECHO", "") == "1",
        )

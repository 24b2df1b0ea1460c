"""Run-time settings, read from SHELLEXEC_* environment variables with documented defaults."""

from __future__ import annotations

import ipaddress
import math
import os
import re
import secrets
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from shellexec.api.call_log import LOG_CALLS, LogLevel, log_level
from shellexec.app import ports
from shellexec.app.browser_boundary import allowed_hosts, cors_origin
from shellexec.rules.limits import RECEIPT_WINDOW_SECONDS, STALLED_WATCHER_SECONDS
from shellexec.store.database import DEFAULT_BUSY_TIMEOUT_MS
from shellexec.store.opening import database_url_problem


def _split(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


_SWITCH_WORDS = {"on": True, "1": True, "true": True, "off": False, "0": False, "false": False}


def _switch(env: Mapping[str, str], name: str, default: bool) -> bool:
    """An on/off variable (`on`, `off`, `1`, `0`, `true`, `false`); unset means `default`."""
    value = env.get(name, "").strip().lower()
    if not value:
        return default
    if value not in _SWITCH_WORDS:
        raise ValueError(f"{name} must be `on` or `off`, not {value[:16]!r}")
    return _SWITCH_WORDS[value]


_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,4})?", re.ASCII)


def _number(env: Mapping[str, str], name: str, default: float, least: float, most: float,
            what: str = "a number") -> float:
    """A number from `least` to `most`; unset means `default`."""
    value = env.get(name, "").strip()
    if not value:
        return default
    # float() alone would also take `1_0` (as 10), `inf` and `nan`.
    number = float(value) if _DECIMAL.fullmatch(value) else math.nan
    if not least <= number <= most:  # also NaN and infinity
        raise ValueError(f"{name} must be {what} from {least:g} to {most:g}, "
                         f"not {value[:16]!r}")
    return number


def _not_negative(env: Mapping[str, str], name: str, default: float, most: float) -> float:
    """A number from 0 to `most`; unset means `default`."""
    return _number(env, name, default, 0, most)


def _whole_number(env: Mapping[str, str], name: str, default: int, most: int,
                  least: int = 0) -> int:
    """A whole number from `least` to `most`; unset means `default`."""
    value = env.get(name, "").strip()
    if not value:
        return default
    # Leading zeros off first: int() of thousands of digits would fail with a message of its
    # own, naming no variable.
    digits = value.lstrip("0") or "0"
    if (not (digits.isascii() and digits.isdigit()) or len(digits) > len(str(most))
            or not least <= int(digits) <= most):
        raise ValueError(f"{name} must be a whole number from {least} to {most}, "
                         f"not {value[:16]!r}")
    return int(digits)


# A probe secret: long enough not to be guessed, and a header value as it is.
_PROBE_SECRET = re.compile(r"[A-Za-z0-9_-]{32,128}")

# The longest drain a stopping server takes (a balancer checks its servers every few seconds).
MAX_DRAIN_SECONDS = 60.0

# The shortest interval a timer setting takes: zero, or 1e-300, made a timer spin (a heartbeat
# sent as fast as the loop runs), and the tests' shortest is 0.2 s.
MIN_SECONDS = 0.05


def _seconds(env: Mapping[str, str], name: str, default: float, most: float) -> float:
    """A number of seconds from MIN_SECONDS to `most`; unset means `default`."""
    return _number(env, name, default, MIN_SECONDS, most, "a number of seconds")


def _address(name: str, value: str, least_port: int) -> None:
    """An IP address and a port (`127.0.0.1:50051`, `[::1]:50051`): Envoy connects to
    addresses, not names."""
    host, colon, port = value.rpartition(":")
    try:
        if host.startswith("[") and host.endswith("]"):
            ipaddress.IPv6Address(host[1:-1])
        else:
            ipaddress.IPv4Address(host)
        valid = bool(colon) and port.isascii() and port.isdigit() and (
            least_port <= int(port) <= MAX_PORT)
    except ValueError:
        valid = False
    if not valid:
        raise ValueError(f"{name} must be an IP address and a port from {least_port} to "
                         f"{MAX_PORT}, such as 127.0.0.1:50051 or [::1]:50051 (a name such "
                         f"as localhost is not taken), not {value[:64]!r}")


def _check_certificate(cert_file: str, key_file: str) -> None:
    """The certificate and key load as a pair, as Envoy will load them: else Envoy's start
    fails with lines naming no setting."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        # An encrypted key gets an empty passphrase, not a prompt: Envoy is given none.
        context.load_cert_chain(cert_file, key_file, password=lambda: b"")
    except OSError as error:  # ssl.SSLError is one too
        try:
            context.load_verify_locations(cafile=cert_file)
        except OSError:
            raise ValueError(f"SHELLEXEC_TLS_CERT_FILE: no PEM certificate could be read "
                             f"from {cert_file[:200]}") from None
        reason = (error.strerror or "not readable") if type(error) is not ssl.SSLError else (
            "no unencrypted PEM private key for that certificate")
        raise ValueError(f"SHELLEXEC_TLS_KEY_FILE: {reason}: {key_file[:200]}") from None


# An hour: SQLite keeps the timeout in a C int, and no lock is worth a call waiting longer.
MAX_BUSY_TIMEOUT_MS = 3_600_000
MAX_PORT = ports.MAX_PORT
HOUR, DAY = 3600.0, 86_400.0
# Bounds of the other settings: far past any sensible value, short of what breaks a timer,
# Envoy's durations or memory.
MAX_POOL_SIZE = 64
MAX_CONVERSION_WORKERS = 64
# Four connections of at most this many KiB each: 32 MiB in all (the Configuration table).
MAX_DB_CACHE_KIB = 8 * 1024
MAX_STATE_CACHE_MIB = 4096
MAX_KNOWN_SESSIONS = 10_000_000
MAX_RETENTION_DAYS = 36_500.0


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
    # sqlite:///PATH (relative to the working directory) or sqlite:////ABSOLUTE/PATH; or
    # postgresql://USER@HOST:PORT/NAME, the store several replicas share (ADR 0070).
    database_url: str = "sqlite:///data/shellexec.db"
    # PostgreSQL: the connections one replica opens (one writes, the others read).
    database_pool_size: int = 4
    # Origins allowed by CORS (and past the browser boundary); the page is same-origin.
    cors_origins: tuple[str, ...] = field(default_factory=tuple)
    # Feed heartbeat interval and the lifetime after which a stream ends (clients resume).
    heartbeat_seconds: float = 15.0
    stream_lifetime_seconds: float = 300.0
    # A watcher whose next event waited this long to be sent is ended (it resumes by revision).
    stalled_watcher_seconds: float = STALLED_WATCHER_SECONDS
    # Seconds a stopping server lets running calls finish.
    shutdown_grace_seconds: float = 5.0
    # Seconds a stopping server keeps serving after its readiness says NOT_SERVING, until a
    # balancer's health check has heard it (a replica of `up`: its Envoy's; 0: none).
    drain_seconds: float = 0.0
    # Worker processes that convert large Normalize and publish requests off the event loop
    # (0: every conversion runs on it).
    conversion_workers: int = 1
    # Memory (bench/memory_bound.py holds the server under 150 MB with these): the SQLite
    # page cache of each of the four database connections, in KiB; how many MiB the fold
    # states kept in memory between updates may hold (their output bodies and every other
    # text); and how many sessions' facts are remembered.
    db_cache_kib: int = 8 * 1024
    # SQLite: milliseconds a statement waits for a lock another program holds on the file
    # (a backup, the sqlite3 shell) before its call fails INTERNAL.
    db_busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    state_cache_mib: int = 32
    known_sessions: int = 4096
    # Prometheus metrics of the server on 127.0.0.1:PORT/metrics, and Envoy's statistics on
    # 127.0.0.1:PORT/stats/prometheus; 0 turns either off (`make run` uses 9464 and 9465).
    metrics_port: int = 0
    envoy_metrics_port: int = 0
    # Seconds between readiness checks of the database (each readiness Check also runs one).
    readiness_check_seconds: float = 5.0
    # Registers `/shellexec.bench.Echo/Echo`, a raw-bytes echo the benchmarks compare against.
    bench_echo: bool = False
    # Bearer tokens (`on`) or none (`off`, the default, allowed on loopback addresses only;
    # docs/security.md).
    auth: bool = False
    # A PEM certificate (chain) and its key: Envoy's front door then speaks HTTPS only.
    tls_cert_file: str = ""
    tls_key_file: str = ""

    # Mask credential forms in everything served to browsers (docs/security.md), and also in
    # what is stored (an update is masked before it is folded).
    mask_secrets: bool = True
    mask_at_rest: bool = False
    # Which calls the server logs to stderr, one JSON line each: `calls`, `errors` or `off`.
    log: LogLevel = LOG_CALLS

    # Sessions without activity for this many days are deleted (0: kept forever), checked
    # every `housekeeping_seconds` (ADR 0062).
    retention_days: float = 0.0
    housekeeping_seconds: float = 60.0
    # Feed events older than this many hours are pruned, and publish receipts older than
    # RECEIPT_WINDOW_SECONDS with them (0: both kept forever); at least the receipt window.
    feed_retention_hours: float = RECEIPT_WINDOW_SECONDS / 3600
    # The secret the front door's health checks of the replicas carry (PROBE_HEADER), which
    # gives them a line of their own; `up --replicas` makes one per run ("": none).
    probe_secret: str = ""

    def with_probe_secret(self) -> Settings:
        """These settings with their probe secret, or one made for this run when none is set:
        `up` gives it to its servers and to Envoy, whose health checks, and its clients' that
        it passes on, then have a line of their own at each server (ADR 0140)."""
        if self.probe_secret:
            return self
        return replace(self, probe_secret=secrets.token_urlsafe(32))

    def __post_init__(self) -> None:
        _address("SHELLEXEC_GRPC_ADDRESS", self.grpc_address, 0)
        if self.probe_secret and not _PROBE_SECRET.fullmatch(self.probe_secret):
            raise ValueError("SHELLEXEC_PROBE_SECRET must be 32 to 128 of A-Z a-z 0-9 _ -, "
                             "or empty (a secret: its value is not repeated here)")
        if (problem := database_url_problem(self.database_url)) is not None:
            raise ValueError(f"SHELLEXEC_DATABASE_URL: {problem}")
        try:
            ipaddress.IPv4Address(self.rest_host)
        except ValueError:
            raise ValueError("SHELLEXEC_REST_HOST must be an IPv4 address such as 127.0.0.1 "
                             "(0.0.0.0 for every interface; a name such as localhost is not "
                             f"taken), not {self.rest_host[:64]!r}") from None
        named = [("SHELLEXEC_GRPC_ADDRESS", ports.split_address(self.grpc_address)[1]),
                 ("SHELLEXEC_REST_PORT", self.rest_port),
                 ("SHELLEXEC_METRICS_PORT", self.metrics_port),
                 ("SHELLEXEC_ENVOY_METRICS_PORT", self.envoy_metrics_port)]
        allowed_hosts(self.rest_host, self.rest_port, self.allowed_hosts)  # each is a host
        taken: dict[int, str] = {}
        for name, port in named:
            if port and port in taken:
                raise ValueError(f"{name} and {taken[port]} name the same port, {port}: "
                                 "each listener needs its own")
            taken[port] = name
        if self.database_pool_size < 2:
            raise ValueError("SHELLEXEC_DATABASE_POOL_SIZE must be at least 2 (a writer and "
                             "a reader)")
        if not self.housekeeping_seconds > 0:
            raise ValueError("SHELLEXEC_HOUSEKEEPING_SECONDS must be more than 0")
        if 0 < self.feed_retention_hours * 3600 < RECEIPT_WINDOW_SECONDS:
            raise ValueError("SHELLEXEC_FEED_RETENTION_HOURS must be 0 (keep the feed) or at "
                             f"least {RECEIPT_WINDOW_SECONDS // 3600} (the receipts' window)")
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ValueError("SHELLEXEC_TLS_CERT_FILE and SHELLEXEC_TLS_KEY_FILE are set "
                             "together or not at all")
        for name, path in (("SHELLEXEC_TLS_CERT_FILE", self.tls_cert_file),
                           ("SHELLEXEC_TLS_KEY_FILE", self.tls_key_file)):
            if path and not os.path.isfile(path):
                raise ValueError(f"{name}: no such file: {path[:200]}")
        if self.tls_cert_file:
            _check_certificate(self.tls_cert_file, self.tls_key_file)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        default = cls()
        return cls(
            grpc_address=env.get("SHELLEXEC_GRPC_ADDRESS", default.grpc_address),
            rest_host=env.get("SHELLEXEC_REST_HOST", default.rest_host),
            rest_port=_whole_number(env, "SHELLEXEC_REST_PORT", default.rest_port, MAX_PORT,
                                    least=1),
            admin_socket=env.get("SHELLEXEC_ADMIN_SOCKET", default.admin_socket),
            allowed_hosts=_split(env.get("SHELLEXEC_ALLOWED_HOSTS", "")),
            database_url=env.get("SHELLEXEC_DATABASE_URL", default.database_url),
            database_pool_size=_whole_number(env, "SHELLEXEC_DATABASE_POOL_SIZE",
                                             default.database_pool_size, MAX_POOL_SIZE,
                                             least=2),
            cors_origins=tuple(dict.fromkeys(
                cors_origin(value)
                for value in _split(env.get("SHELLEXEC_CORS_ORIGINS", "")))),
            heartbeat_seconds=_seconds(env, "SHELLEXEC_HEARTBEAT_SECONDS",
                                       default.heartbeat_seconds, HOUR),
            stream_lifetime_seconds=_seconds(env, "SHELLEXEC_STREAM_LIFETIME_SECONDS",
                                             default.stream_lifetime_seconds, DAY),
            stalled_watcher_seconds=_seconds(env, "SHELLEXEC_STALLED_WATCHER_SECONDS",
                                             default.stalled_watcher_seconds, HOUR),
            shutdown_grace_seconds=_not_negative(env, "SHELLEXEC_SHUTDOWN_GRACE_SECONDS",
                                                 default.shutdown_grace_seconds, HOUR),
            drain_seconds=_not_negative(env, "SHELLEXEC_DRAIN_SECONDS", default.drain_seconds,
                                        MAX_DRAIN_SECONDS),
            conversion_workers=_whole_number(env, "SHELLEXEC_CONVERSION_WORKERS",
                                             default.conversion_workers,
                                             MAX_CONVERSION_WORKERS),
            db_cache_kib=_whole_number(env, "SHELLEXEC_DB_CACHE_KIB", default.db_cache_kib,
                                       MAX_DB_CACHE_KIB),
            db_busy_timeout_ms=_whole_number(env, "SHELLEXEC_DB_BUSY_TIMEOUT_MS",
                                             default.db_busy_timeout_ms, MAX_BUSY_TIMEOUT_MS),
            state_cache_mib=_whole_number(env, "SHELLEXEC_STATE_CACHE_MIB",
                                          default.state_cache_mib, MAX_STATE_CACHE_MIB),
            known_sessions=_whole_number(env, "SHELLEXEC_KNOWN_SESSIONS",
                                         default.known_sessions, MAX_KNOWN_SESSIONS),
            metrics_port=_whole_number(env, "SHELLEXEC_METRICS_PORT", default.metrics_port,
                                       MAX_PORT),
            envoy_metrics_port=_whole_number(env, "SHELLEXEC_ENVOY_METRICS_PORT",
                                             default.envoy_metrics_port, MAX_PORT),
            readiness_check_seconds=_seconds(env, "SHELLEXEC_READINESS_CHECK_SECONDS",
                                             default.readiness_check_seconds, HOUR),
            bench_echo=env.get("SHELLEXEC_BENCH_ECHO", "") == "1",
            auth=_switch(env, "SHELLEXEC_AUTH", default.auth),
            tls_cert_file=env.get("SHELLEXEC_TLS_CERT_FILE", default.tls_cert_file),
            tls_key_file=env.get("SHELLEXEC_TLS_KEY_FILE", default.tls_key_file),
            mask_secrets=_switch(env, "SHELLEXEC_MASK_SECRETS", default.mask_secrets),
            mask_at_rest=_switch(env, "SHELLEXEC_MASK_AT_REST", default.mask_at_rest),
            log=log_level(env.get("SHELLEXEC_LOG", default.log)),
            retention_days=_not_negative(env, "SHELLEXEC_RETENTION_DAYS",
                                         default.retention_days, MAX_RETENTION_DAYS),
            housekeeping_seconds=_seconds(env, "SHELLEXEC_HOUSEKEEPING_SECONDS",
                                          default.housekeeping_seconds, DAY),
            feed_retention_hours=_not_negative(env, "SHELLEXEC_FEED_RETENTION_HOURS",
                                               default.feed_retention_hours,
                                               MAX_RETENTION_DAYS * 24),
            probe_secret=env.get("SHELLEXEC_PROBE_SECRET", default.probe_secret).strip(),
        )

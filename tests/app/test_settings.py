"""Every numeric or address setting is checked when read: a bad value is refused with a message
naming the variable, before anything starts, never a traceback and never a service that
starts and then spins (a heartbeat of 0 sent heartbeats as fast as the loop ran) or breaks
(Envoy refusing its configuration, a feed that ends at once)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shellexec.app.envoy import render
from shellexec.app.settings import Settings
from shellexec.store import database_url_problem

from support.stack import free_port

BAD = [
    ("SHELLEXEC_REST_PORT", "abc"), ("SHELLEXEC_REST_PORT", "0"),
    ("SHELLEXEC_REST_PORT", "99999999999"), ("SHELLEXEC_REST_PORT", "-1"),
    ("SHELLEXEC_METRICS_PORT", "65536"), ("SHELLEXEC_ENVOY_METRICS_PORT", "1.5"),
    ("SHELLEXEC_DATABASE_POOL_SIZE", "1"), ("SHELLEXEC_DATABASE_POOL_SIZE", ""),
    ("SHELLEXEC_CONVERSION_WORKERS", "-1"), ("SHELLEXEC_DB_CACHE_KIB", "99999999999"),
    ("SHELLEXEC_STATE_CACHE_MIB", "x"), ("SHELLEXEC_KNOWN_SESSIONS", "-1"),
    ("SHELLEXEC_HEARTBEAT_SECONDS", "0"), ("SHELLEXEC_HEARTBEAT_SECONDS", "nan"),
    ("SHELLEXEC_HEARTBEAT_SECONDS", "inf"), ("SHELLEXEC_HEARTBEAT_SECONDS", "1e300"),
    ("SHELLEXEC_HEARTBEAT_SECONDS", "1e-300"), ("SHELLEXEC_HOUSEKEEPING_SECONDS", "5e-324"),
    ("SHELLEXEC_READINESS_CHECK_SECONDS", "0.001"),
    ("SHELLEXEC_STREAM_LIFETIME_SECONDS", "-5"), ("SHELLEXEC_STALLED_WATCHER_SECONDS", "0"),
    ("SHELLEXEC_READINESS_CHECK_SECONDS", "0"), ("SHELLEXEC_SHUTDOWN_GRACE_SECONDS", "abc"),
    ("SHELLEXEC_HOUSEKEEPING_SECONDS", "0"), ("SHELLEXEC_RETENTION_DAYS", "inf"),
    ("SHELLEXEC_FEED_RETENTION_HOURS", "1e300"),
    ("SHELLEXEC_DRAIN_SECONDS", "-1"), ("SHELLEXEC_DRAIN_SECONDS", "61"),
    ("SHELLEXEC_DRAIN_SECONDS", "nan"), ("SHELLEXEC_DRAIN_SECONDS", "1e300"),
    ("SHELLEXEC_GRPC_ADDRESS", "abc"), ("SHELLEXEC_GRPC_ADDRESS", "127.0.0.1"),
    ("SHELLEXEC_GRPC_ADDRESS", "127.0.0.1:abc"), ("SHELLEXEC_GRPC_ADDRESS", "127.0.0.1:70000"),
    ("SHELLEXEC_GRPC_ADDRESS", "localhost:50051"), ("SHELLEXEC_GRPC_ADDRESS", "::1:50051"),
    ("SHELLEXEC_REST_HOST", "localhost"), ("SHELLEXEC_REST_HOST", ""),
    # Checked when Envoy's configuration was made: after the server had started.
    ("SHELLEXEC_ALLOWED_HOSTS", "*.example"), ("SHELLEXEC_ALLOWED_HOSTS", "a b"),
    ("SHELLEXEC_ALLOWED_HOSTS", "example.com:99999"), ("SHELLEXEC_ALLOWED_HOSTS", "a.b:0"),
    # Envoy matches the Host as written: a port of other digits, or with a leading zero,
    # would never match what a browser sends.
    ("SHELLEXEC_ALLOWED_HOSTS", "example.com:\u0668\u0660\u0668\u0660"),
    ("SHELLEXEC_ALLOWED_HOSTS", "a.b:0099"), ("SHELLEXEC_ALLOWED_HOSTS", "a.b:" + "9" * 5000),
    ("SHELLEXEC_LOG", "loud"), ("SHELLEXEC_LOG", "call s"),
    ("SHELLEXEC_PROBE_SECRET", "short"), ("SHELLEXEC_PROBE_SECRET", "a b" * 20),
    # float() takes these: 10 seconds, and Arabic-Indic digits.
    ("SHELLEXEC_HEARTBEAT_SECONDS", "1_0"), ("SHELLEXEC_RETENTION_DAYS", "\u0661\u0660"),
    # An origin is matched exactly: each of these would match nothing, or (`null`) every
    # sandboxed frame and file: page.
    *(("SHELLEXEC_CORS_ORIGINS", origin) for origin in (
        "*", "null", "https://dash.example/", "https://dash.example/app", "dash.example",
        "https://*.dash.example", "https://user@dash.example", "http://dash.example:99999",
        "https://dash.example, ftp:/x")),
]
# An empty value means the default, except where the variable is a host.
EMPTY_IS_DEFAULT = {"SHELLEXEC_DATABASE_POOL_SIZE"}


@pytest.mark.parametrize(("name", "value"), BAD)
def test_a_bad_value_is_refused_naming_its_variable(name: str, value: str) -> None:
    if value == "" and name in EMPTY_IS_DEFAULT:
        assert Settings.from_env({name: value}) == Settings()
        return
    with pytest.raises(ValueError, match=f"^{name} "):
        Settings.from_env({name: value})


@pytest.mark.parametrize(("name", "value"), [
    ("SHELLEXEC_REST_PORT", "65535"), ("SHELLEXEC_GRPC_ADDRESS", "0.0.0.0:0"),
    ("SHELLEXEC_GRPC_ADDRESS", "[::1]:50051"),
    ("SHELLEXEC_HEARTBEAT_SECONDS", "0.5"), ("SHELLEXEC_SHUTDOWN_GRACE_SECONDS", "0"),
    ("SHELLEXEC_CONVERSION_WORKERS", "0"), ("SHELLEXEC_RETENTION_DAYS", "0.25"),
    ("SHELLEXEC_DB_CACHE_KIB", "8192"), ("SHELLEXEC_METRICS_PORT", "0"),
    ("SHELLEXEC_DRAIN_SECONDS", "0"), ("SHELLEXEC_DRAIN_SECONDS", "60"),
])
def test_a_value_at_a_bound_is_taken(name: str, value: str) -> None:
    Settings.from_env({name: value})


@pytest.mark.parametrize(("value", "level"), [
    ("errors", "errors"), (" Errors ", "errors"), ("OFF", "off"), ("", "calls"),
    ("  ", "calls"),
])
def test_the_log_setting_is_read_as_every_other(value: str, level: str) -> None:
    """In any case, without its spaces, and empty for the default (it was refused)."""
    assert Settings.from_env({"SHELLEXEC_LOG": value}).log == level


@pytest.mark.parametrize(("value", "origins"), [
    ("https://Dash.Example:443, http://10.0.0.5:3000", ("https://dash.example",
                                                       "http://10.0.0.5:3000")),
    ("http://[::1]:8080,http://[::1]:8080", ("http://[::1]:8080",)),
    ("http://dash.example:80", ("http://dash.example",)),
    ("chrome-extension://abcdefghij", ("chrome-extension://abcdefghij",)),
])
def test_a_cors_origin_is_kept_as_a_browser_sends_it(value: str,
                                                     origins: tuple[str, ...]) -> None:
    """Browsers send the scheme and host in lower case and leave a default port out."""
    assert Settings.from_env({"SHELLEXEC_CORS_ORIGINS": value}).cors_origins == origins


@pytest.mark.parametrize("names", [
    ("SHELLEXEC_METRICS_PORT", "SHELLEXEC_ENVOY_METRICS_PORT"),
    ("SHELLEXEC_METRICS_PORT", "SHELLEXEC_REST_PORT"),
    ("SHELLEXEC_ENVOY_METRICS_PORT", "SHELLEXEC_REST_PORT"),
])
def test_two_listeners_on_one_port_are_refused_naming_both(names: tuple[str, str]) -> None:
    """Envoy failed to bind one of them, and `up` ended in a traceback."""
    with pytest.raises(ValueError, match="name the same port, 19181") as refused:
        Settings.from_env(dict.fromkeys(names, "19181"))
    assert all(name in str(refused.value) for name in names)
    with pytest.raises(ValueError, match="the same port, 19182"):
        Settings.from_env({"SHELLEXEC_GRPC_ADDRESS": "127.0.0.1:19182",
                           "SHELLEXEC_REST_PORT": "19182"})


def test_up_with_a_bad_setting_says_so_and_starts_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "SHELLEXEC_HEARTBEAT_SECONDS": "0"}
    done = subprocess.run([sys.executable, "-m", "shellexec.app.cli", "up"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("shellexec: SHELLEXEC_HEARTBEAT_SECONDS must be a number")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".run").exists()


@pytest.mark.parametrize(("args", "url", "message"), [
    (["token", "list"], "/srv/shellexec.db",
     "SHELLEXEC_DATABASE_URL: '/srv/shellexec.db' is not a database URL; use "
     "'sqlite:////srv/shellexec.db' for that SQLite file"),
    (["token", "create", "--name", "n", "--scope", "read"], "",
     "SHELLEXEC_DATABASE_URL: is empty; unset it for the default"),
    (["serve"], "mysql://u:secret@127.0.0.1/x",
     "SHELLEXEC_DATABASE_URL: unsupported database 'mysql'"),
    (["up", "--database", "data/x.db"], "sqlite:///data/y.db",
     "--database: 'data/x.db' is not a database URL; use 'sqlite:///data/x.db'"),
    # A mistyped URL with a login, or libpq's keywords, is not repeated: it may hold a
    # password.
    (["serve"], "postgres ://admin:secret@db.internal/app",
     "SHELLEXEC_DATABASE_URL: is not a database URL (not repeated here"),
    (["token", "list"], "//admin:secret@db.internal/app",
     "SHELLEXEC_DATABASE_URL: is not a database URL (not repeated here"),
    (["token", "list"], "host=db user=admin password=secret dbname=app",
     "SHELLEXEC_DATABASE_URL: is not a database URL (not repeated here"),
    # libpq's own messages quote the URL: a traceback showed the password.
    (["serve"], "postgresql://admin:S3C%secretPW@127.0.0.1:1/db",
     "SHELLEXEC_DATABASE_URL: is not a PostgreSQL URL libpq can read (not repeated here"),
    (["token", "list"], "postgresql://admin:secret@[db/app",
     "SHELLEXEC_DATABASE_URL: is not a database URL (not repeated here"),
    (["up"], "postgres://admin:secret@db.internal:5432/app?sslmod=require",
     "SHELLEXEC_DATABASE_URL: is not a PostgreSQL URL libpq can read (not repeated here"),
    # Refused at once, not taken for an outage to retry.
    (["serve"], "postgresql://admin:secret@db.internal:54x2/app",
     "SHELLEXEC_DATABASE_URL: has a port that is not a number from 1 to 65535"),
    (["token", "list"], "postgresql://admin:secret@db.internal:65536/app",
     "SHELLEXEC_DATABASE_URL: has a port that is not a number from 1 to 65535"),
    # A / in the password: libpq reads `admin:sec` as the host and its port.
    (["token", "list"], "postgresql://admin:secret/Kq2@db.internal:5432/app",
     "SHELLEXEC_DATABASE_URL: has a port that is not a number from 1 to 65535 (not repeated"),
    (["serve"], "postgresql://admin:secret@db.internal/app?sslmode=requires",
     "SHELLEXEC_DATABASE_URL: has an sslmode libpq does not take: it takes disable, allow"),
])
def test_a_database_url_of_no_known_form_is_refused_naming_its_source(
        tmp_path: Path, args: list[str], url: str, message: str) -> None:
    """`shellexec token` answered a plain path with a traceback, and the others quoted its
    empty scheme."""
    done = subprocess.run([sys.executable, "-m", "shellexec.app.cli", *args], cwd=tmp_path,
                          env={**os.environ, "SHELLEXEC_DATABASE_URL": url},
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"shellexec: {message}"), done.stderr
    assert "secret" not in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", [
    "postgresql://shellexec:S3cret@db.internal:5432/shellexec",
    "postgres://shellexec@[::1]/shellexec?sslmode=verify-full",
    "postgresql://shellexec@db-a:5432,db-b:5433/shellexec?target_session_attrs=read-write",
    # A Unix socket: no host before the path (the URL rebuilt from its parts lost its `//`).
    "postgres:///shellexec?host=/var/run/postgresql",
    "postgresql://%2Fvar%2Frun%2Fpostgresql/shellexec",
])
def test_postgresql_urls_libpq_reads_are_taken(url: str) -> None:
    assert database_url_problem(url) is None


def test_an_ipv6_grpc_address_reaches_envoy_without_brackets() -> None:
    """Envoy refused `[::1]` as an address, and `up` ended in a traceback."""
    config = render(Settings.from_env({"SHELLEXEC_GRPC_ADDRESS": "[::1]:50051"}), 50051)
    assert '"address": "::1", "port_value": 50051' in config
    assert "[::1]\", \"port_value\"" not in config


@pytest.mark.parametrize("kind", ["a folder", "a file that is no database"])
def test_a_database_that_cannot_be_used_is_named_before_anything_starts(
        tmp_path: Path, kind: str) -> None:
    """A folder, a file that is no database, or a read-only file (which started, reported
    ready, and answered every write INTERNAL) ended in a peewee traceback or a broken
    server; the store now tries a write when it opens."""
    target = tmp_path / "folder"
    target.mkdir()
    if kind == "a file that is no database":
        target = tmp_path / "notes.txt"
        target.write_text("not a database\n" * 100)
    env = {**os.environ, "SHELLEXEC_DATABASE_URL": f"sqlite:///{target}",
           "SHELLEXEC_GRPC_ADDRESS": "127.0.0.1:0", "SHELLEXEC_REST_PORT": str(free_port())}
    done = subprocess.run([sys.executable, "-m", "shellexec.app.cli", "up"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"shellexec: SHELLEXEC_DATABASE_URL: cannot use the SQLite database '{target}': ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("env", "message"), [
    ({"SHELLEXEC_DATABASE_URL": "sqlite:///{tmp}/a-file/x.db"},
     "shellexec: SHELLEXEC_DATABASE_URL: cannot use the SQLite database '{tmp}/a-file/x.db': "
     "its folder cannot be made"),
    ({"SHELLEXEC_DATABASE_URL": "sqlite:///:memory:"},
     "shellexec: SHELLEXEC_DATABASE_URL: cannot use the SQLite database ':memory:'"),
    ({"SHELLEXEC_ADMIN_SOCKET": "{tmp}/a-file/envoy/admin.sock"},
     "shellexec: the admin socket's folder {tmp}/a-file/envoy cannot be made"),
])
def test_a_path_that_cannot_be_used_is_named_before_the_server_starts(
        tmp_path: Path, env: dict[str, str], message: str) -> None:
    (tmp_path / "a-file").write_text("a file where a folder would go\n")
    settings = {name: value.format(tmp=tmp_path) for name, value in env.items()}
    done = subprocess.run(
        [sys.executable, "-m", "shellexec.app.cli", "up"], cwd=tmp_path, timeout=60,
        env={**os.environ, "SHELLEXEC_GRPC_ADDRESS": "127.0.0.1:0",
             "SHELLEXEC_REST_PORT": str(free_port()),
             "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'ok.db'}", **settings},
        capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.startswith(message.format(tmp=tmp_path)), done.stderr
    assert "Traceback" not in done.stderr
    assert "shellexec stopped" not in done.stdout  # nothing had started


@pytest.mark.parametrize(("replicas", "env", "message"), [
    (100_000, {}, "--replicas must be from 1 to 64"),
    (2, {"SHELLEXEC_METRICS_PORT": "19464", "SHELLEXEC_ENVOY_METRICS_PORT": "19465"},
     "replica 2 would serve its metrics on SHELLEXEC_METRICS_PORT + 1 = 19465, which is "
     "SHELLEXEC_ENVOY_METRICS_PORT"),
    (3, {"SHELLEXEC_METRICS_PORT": "65534"}, "= 65536, which is past 65535"),
])
def test_a_cluster_that_cannot_start_says_why_before_anything_starts(
        tmp_path: Path, replicas: int, env: dict[str, str], message: str) -> None:
    """100,000 replicas looked for ports for ever; replica 2's metrics port on Envoy's
    statistics port failed in its own log only."""
    done = subprocess.run(
        [sys.executable, "-m", "shellexec.app.cli", "up", "--replicas", str(replicas)],
        cwd=tmp_path, timeout=60, capture_output=True, text=True,
        env={**os.environ, "SHELLEXEC_DATABASE_URL": "postgresql://u@127.0.0.1:1/x",
             "SHELLEXEC_REST_PORT": str(free_port()), **env})
    assert done.returncode == 1
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert "shellexec stopped" not in done.stdout  # nothing had started


@pytest.mark.parametrize(("args", "env", "source"), [
    (["up"], {"SHELLEXEC_DATABASE_URL": "postgresql://u:secret@127.0.0.1:1/x"},
     "SHELLEXEC_DATABASE_URL"),
    (["up", "--database", "postgresql://u:secret@127.0.0.1:1/x"], {}, "--database"),
    (["serve"], {"SHELLEXEC_DATABASE_URL": "postgresql://u:secret@127.0.0.1:1/x"},
     "SHELLEXEC_DATABASE_URL"),
])
def test_a_postgresql_server_that_does_not_answer_is_named_with_the_driver_s_reason(
        tmp_path: Path, args: list[str], env: dict[str, str], source: str) -> None:
    """It said only "the database is unavailable; retry shortly", naming neither the setting
    nor why."""
    done = subprocess.run(
        [sys.executable, "-m", "shellexec.app.cli", *args], cwd=tmp_path, timeout=60,
        capture_output=True, text=True,
        env={**os.environ, "SHELLEXEC_GRPC_ADDRESS": "127.0.0.1:0",
             "SHELLEXEC_REST_PORT": str(free_port()), **env})
    assert done.returncode == 1
    assert done.stderr.startswith(f"shellexec: {source}: the database is unavailable ("), (
        done.stderr)
    assert 'port 1 failed: Connection refused' in done.stderr
    assert "secret" not in done.stderr
    assert "Traceback" not in done.stderr


def test_up_keeps_a_probe_secret_given_and_makes_one_otherwise() -> None:
    given = Settings(probe_secret="s" * 32)
    assert given.with_probe_secret() is given
    made = Settings().with_probe_secret().probe_secret
    assert made != Settings().with_probe_secret().probe_secret  # one per run
    assert Settings.from_env({"SHELLEXEC_PROBE_SECRET": made}).probe_secret == made

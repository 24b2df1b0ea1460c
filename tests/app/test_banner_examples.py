"""The start-up banners' curl examples send the caller's token when authentication is on,
written so that a shell fills in `$TOKEN` (in double quotes: single quotes would send the
literal text `$TOKEN`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from app.test_tls import certificate

from shellexec.app import cli, cluster
from shellexec.app.server import metrics_lines
from shellexec.app.settings import Settings
from shellexec.store import shown_database_url


def _curl_line(banner: str) -> str:
    return next(line.strip() for line in banner.splitlines() if line.strip().startswith("curl"))


def _sent_headers(banner: str, token: str) -> list[str]:
    """The headers the example's curl would send, as bash expands its words with TOKEN set."""
    arguments = _curl_line(banner).removeprefix("curl")
    words = subprocess.run(["bash", "-c", f"set -- {arguments}; printf '%s\\n' \"$@\""],
                           env={"TOKEN": token}, capture_output=True, text=True, check=True,
                           timeout=10).stdout.splitlines()
    return [words[index + 1] for index, word in enumerate(words) if word == "-H"]


def test_the_examples_send_the_token_when_authentication_is_on() -> None:
    on = Settings(auth=True)
    for banner in (cli._banner(on, 50051), cluster._banner(on, "postgresql://x", [])):
        assert "$TOKEN" in banner
        assert _sent_headers(banner, "shx_abc") == ["authorization: Bearer shx_abc"]


def test_the_examples_send_no_header_when_authentication_is_off() -> None:
    off = Settings()
    for banner in (cli._banner(off, 50051), cluster._banner(off, "postgresql://x", [])):
        assert _sent_headers(banner, "shx_abc") == []


def _words(banner: str) -> list[str]:
    """The example's curl arguments, as bash splits them."""
    arguments = _curl_line(banner).removeprefix("curl")
    return subprocess.run(["bash", "-c", f"set -- {arguments}; printf '%s\\n' \"$@\""],
                          capture_output=True, text=True, check=True,
                          timeout=10).stdout.splitlines()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_with_tls_the_banners_give_https_and_trust_the_certificate(tmp_path: Path) -> None:
    """A cluster's banner said http:// with TLS on, and its curl got an empty reply; neither
    banner's curl trusted a self-signed certificate."""
    folder = tmp_path / "front door"
    folder.mkdir()
    cert, key = certificate(folder)
    tls = Settings(tls_cert_file=str(cert), tls_key_file=str(key), rest_port=8443)
    for banner in (cli._banner(tls, 50051), cluster._banner(tls, "postgresql://x", [])):
        assert "REST + web page   https://127.0.0.1:8443/" in banner
        assert "http://127.0.0.1:8443" not in banner
        words = _words(banner)
        assert words[words.index("--cacert") + 1] == str(cert)
        assert "https://127.0.0.1:8443/api/v1/task-sessions" in words
    assert "--cacert" not in _words(cli._banner(Settings(), 50051))


def test_the_banners_name_each_replica_s_metrics_and_envoy_s_statistics() -> None:
    """A cluster's banner named no metrics URL, though each replica served one."""
    settings = Settings(metrics_port=19564, envoy_metrics_port=19570)
    assert [line.split() for line in metrics_lines(settings, 2)] == [
        ["replica", "1", "metrics", "http://127.0.0.1:19564/metrics"],
        ["replica", "2", "metrics", "http://127.0.0.1:19565/metrics"],
        ["Envoy", "statistics", "http://127.0.0.1:19570/stats/prometheus"]]
    assert metrics_lines(settings)[0].split() == [
        "metrics", "http://127.0.0.1:19564/metrics"]
    assert "http://127.0.0.1:19570/stats/prometheus" in cluster._banner(
        settings, "postgresql://x", [])


def test_the_banners_never_print_the_database_password() -> None:
    """`shellexec serve` printed the whole URL, password included."""
    url = "postgresql://app:S3cretPw@db.internal:5432/shellexec"
    for banner in (cli._banner(Settings(database_url=url), 50051),
                   cluster._banner(Settings(database_url=url), url, [])):
        assert "S3cretPw" not in banner
        assert "postgresql://app:…@db.internal:5432/shellexec" in banner
    assert "sqlite:///data/shellexec.db" in cli._banner(Settings(), 50051)
    # Without a password, as `up`'s local PostgreSQL: whole, to be copied for `shellexec token`.
    local = "postgresql://postgres@127.0.0.1:41234/shellexec_local"
    assert local in cluster._banner(Settings(), local, [])


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://app@db/x?password=S3cretPw&sslmode=require",
     "postgresql://app@db/x?password=…&sslmode=require"),
    ("postgresql://app@db/x?sslpassword=S3cretPw", "postgresql://app@db/x?sslpassword=…"),
    # An @ after the host (in the query) is not the login's: the host stays.
    ("postgresql://app:S3cretPw@db/x?application_name=a@b",
     "postgresql://app:…@db/x?application_name=a@b"),
    ("postgres:///x?host=/run/postgresql", "postgres:///x?host=/run/postgresql"),
    # A SQLite URL names a file, whatever its characters.
    ("sqlite:////tmp/a:b@c/db.sqlite", "sqlite:////tmp/a:b@c/db.sqlite"),
])
def test_a_database_url_is_shown_without_a_password_and_otherwise_as_it_is(
        url: str, shown: str) -> None:
    assert shown_database_url(url) == shown

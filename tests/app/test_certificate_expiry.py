"""`up` warns when the front door's certificate has expired or expires within two weeks:
Envoy served an expired certificate without a word, and clients refused it with an error that
named the certificate's dates, not the setting."""

from __future__ import annotations

import shutil
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from app.test_lifecycle import BANNER, Up, up_env
from app.test_tls import certificate
from app.test_up_replicas import BANNER as CLUSTER_BANNER
from app.test_up_replicas import cluster_env, wait_for_output

from shellexec.app import processes
from shellexec.app.certificate_expiry import warning_for

from support.stack import BIN


def certs(*ends: str, path: str = "/etc/front.pem") -> dict[str, object]:
    """Envoy's `/certs` answer for one chain of certificates ending at `ends`."""
    return {"certificates": [{"ca_cert": [], "cert_chain": [
        {"path": path, "days_until_expiration": "0", "expiration_time": end} for end in ends]}]}


NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("answer", "warning"), [
    (certs("2020-02-01T00:00:00Z"),
     "the TLS certificate /etc/front.pem (SHELLEXEC_TLS_CERT_FILE) expired on 2020-02-01 "
     "00:00 UTC: clients that check it refuse to connect; renew it and restart"),
    (certs("2026-12-09T12:30:00Z"),
     "the TLS certificate /etc/front.pem (SHELLEXEC_TLS_CERT_FILE) expires on 2026-12-09 "
     "12:30 UTC, in 3 days: renew it and restart before then"),
    (certs("2026-12-07T11:00:00Z"), "in less than a day"),
    (certs("2026-12-08T12:00:00Z"), "in 2 days"),
    (certs("2026-12-20T12:00:00Z"), "in 14 days"),
    # The chain's first certificate to expire is the one named.
    (certs("2027-06-01T00:00:00Z", "2026-12-01T00:00:00Z"), "expired on 2026-12-01"),
    (certs("2026-12-06T12:00:00"), "expired on 2026-12-06 12:00 UTC"),  # no zone: UTC
])
def test_an_expired_or_expiring_certificate_is_named_with_its_date(answer: object,
                                                                   warning: str) -> None:
    found = warning_for(answer, NOW)
    assert found is not None
    assert warning in found


@pytest.mark.parametrize("answer", [
    certs("2026-12-20T12:00:01Z"), certs("2030-01-01T00:00:00Z"),
    None, {}, {"certificates": []}, {"certificates": "x"}, {"certificates": [1, {}]},
    {"certificates": [{"cert_chain": [1, {}, {"expiration_time": "soon"},
                                      {"expiration_time": None}]}]},
])
def test_a_lasting_certificate_or_an_answer_without_dates_gives_no_warning(
        answer: object) -> None:
    assert warning_for(answer, NOW) is None


def expired_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 valid through January 2020 and its key: `openssl req`
    takes no date in the past, so it is signed with `openssl ca`, which takes both dates."""
    key, request, cert = folder / "key.pem", folder / "request.csr", folder / "cert.pem"
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(request)],
                   check=True, capture_output=True, timeout=60)
    (folder / "index.txt").write_text("")
    (folder / "serial").write_text("01\n")
    (folder / "ca.cnf").write_text(
        "[ca]\ndefault_ca = own\n[own]\ndatabase = index.txt\nserial = serial\n"
        "new_certs_dir = .\ndefault_md = sha256\npolicy = any\n[any]\n"
        "commonName = supplied\n")
    subprocess.run(["openssl", "ca", "-batch", "-config", "ca.cnf", "-selfsign",
                    "-keyfile", str(key), "-in", str(request), "-out", str(cert),
                    "-startdate", "20200101000000Z", "-enddate", "20200201000000Z"],
                   cwd=folder, check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
@pytest.mark.parametrize(("make", "said"), [
    (expired_certificate, "expired on 2020-02-01 00:00 UTC: clients that check it refuse"),
    (certificate, "in less than a day: renew it and restart before then"),  # valid one day
])
def test_up_warns_of_the_certificate_envoy_serves_and_still_starts(
        tmp_path: Path, make: object, said: str) -> None:
    files = tmp_path / "tls"
    files.mkdir()
    cert, key = make(files)  # type: ignore[operator]
    service = Up(tmp_path, up_env(tmp_path, SHELLEXEC_TLS_CERT_FILE=str(cert),
                                  SHELLEXEC_TLS_KEY_FILE=str(key)))
    try:
        service.start().wait_for(BANNER)
        warning = next(line for line in service.stderr.splitlines()
                       if line.startswith("shellexec: warning: the TLS certificate"))
        assert f"the TLS certificate {cert.resolve()} (SHELLEXEC_TLS_CERT_FILE)" in warning
        assert said in warning
    finally:
        service.stop()


def lasting_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 valid for 30 days, and its key."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.mark.slow
@pytest.mark.parametrize("tls", [False, True])
def test_up_without_tls_or_with_a_lasting_certificate_warns_of_nothing(
        tmp_path: Path, tls: bool) -> None:
    files = {}
    if tls:
        cert, key = lasting_certificate(tmp_path)
        files = {"SHELLEXEC_TLS_CERT_FILE": str(cert), "SHELLEXEC_TLS_KEY_FILE": str(key)}
    service = Up(tmp_path, up_env(tmp_path, **files))
    try:
        service.start().wait_for(BANNER)
        assert "warning" not in service.stderr
    finally:
        service.stop()


@pytest.mark.slow
@pytest.mark.postgresql  # `up --replicas` starts a local one
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_a_cluster_warns_of_an_expired_certificate_too(tmp_path: Path) -> None:
    cert, key = expired_certificate(tmp_path)
    env = {**cluster_env(tmp_path), "SHELLEXEC_TLS_CERT_FILE": str(cert),
           "SHELLEXEC_TLS_KEY_FILE": str(key)}
    with open(tmp_path / "up.out", "wb") as out, open(tmp_path / "up.err", "wb") as err:
        up = subprocess.Popen([BIN / "shellexec", "up", "--replicas", "2"], cwd=tmp_path,
                              env=env, stdout=out, stderr=err, start_new_session=True)
    try:
        wait_for_output(tmp_path / "up.out", CLUSTER_BANNER, up)
        assert (f"shellexec: warning: the TLS certificate {cert.resolve()} "
                "(SHELLEXEC_TLS_CERT_FILE) expired on 2020-02-01") in (
                    tmp_path / "up.err").read_text()
    finally:
        processes.stop(up, 30, first=signal.SIGINT)

"""The bridge through a TLS front door (`--tls`, `--tls-ca`): a certificate it cannot trust is
said to be one, at once, not retried for the whole `--retry-for` as "service unreachable ...
start it with make run"; and the page's URL it prints is the front door's, over HTTPS."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import grpc
import pytest
from bridge.harness import run_bridge
from bridge.provider_scripts import say

from shellexec.bridge.errors import ServiceUnavailableError
from shellexec.bridge.retry import RetryPolicy, retrying
from shellexec.bridge.tls_failures import tls_failure

from support.stack import Stack, running_stack

# What gRPC Python said, verbatim, of a self-signed certificate checked against another one,
# of one naming another host, of a server that does not speak TLS, and of a handshake cut.
UNTRUSTED = ("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:21601: "
             "Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL "
             "routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: self signed certificate: OK")
OTHER_NAME = ("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:21601: "
              "Custom verification check failed with error: UNAUTHENTICATED: Hostname "
              "Verification Check failed.")
NOT_TLS = ("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:21603: Tls "
           "handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:100000f7:SSL "
           "routines:OPENSSL_internal:WRONG_VERSION_NUMBER: Invalid certificate verification "
           "context: OK")
CUT = ("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:21601: Tls "
       "handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SYSCALL")
REFUSED = ("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:21602: "
           "Failed to connect to remote host: Connection refused")
SCRIPT = [{"update": say("over TLS")}]


@pytest.mark.parametrize(("details", "starts", "definite"), [
    (UNTRUSTED, "the service's certificate was not trusted: pass --tls-ca", True),
    (OTHER_NAME, "the service's certificate does not name the host of --server", True),
    (NOT_TLS, "the server at --server does not speak TLS", True),
    (CUT, "the TLS handshake with the service failed", False),
])
def test_a_tls_failure_is_told_from_an_outage(details: str, starts: str,
                                              definite: bool) -> None:
    failure = tls_failure(details)
    assert failure is not None
    assert failure.what.startswith(starts)
    assert failure.definite is definite


def test_an_outage_is_no_tls_failure() -> None:
    assert tls_failure(REFUSED) is None


def test_a_server_s_own_words_are_no_tls_failure_of_the_bridge() -> None:
    """A proxy whose own upstream TLS failed answers UNAVAILABLE naming the failure: the
    bridge's handshake succeeded, and it exited 2 telling the user to fix --tls-ca."""
    upstream = ("upstream connect error or disconnect/reset before headers. reset reason: "
                "connection failure, transport failure reason: TLS_error:|268435581:SSL "
                "routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED:TLS_error_end")
    assert tls_failure(upstream) is None


@pytest.mark.parametrize(("details", "hint"), [
    (CUT, "the TLS handshake with the service failed"),
    (REFUSED, "is the service running? Start it with `make run`"),
])
def test_a_retried_tls_failure_hints_at_tls_not_at_starting_the_service(
        details: str, hint: str) -> None:
    async def attempt() -> None:
        raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, details=details)

    with pytest.raises(ServiceUnavailableError) as raised:
        asyncio.run(retrying(RetryPolicy(window=0.01), "publish update #1", attempt))
    assert hint in str(raised.value)
    assert ("make run" in str(raised.value)) is (details == REFUSED)


class FrontDoor(NamedTuple):
    stack: Stack
    certificate: Path
    another: Path  # a certificate the front door does not serve

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.stack.rest_port}"


def _certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.fixture(scope="module")
def front_door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontDoor]:
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    folder = tmp_path_factory.mktemp("bridge-tls")
    cert, key = _certificate(folder, "front-door")
    another, _ = _certificate(folder, "another")
    with running_stack(folder, SHELLEXEC_TLS_CERT_FILE=str(cert),
                       SHELLEXEC_TLS_KEY_FILE=str(key)) as stack:
        yield FrontDoor(stack, cert, another)


# The page's URL must come from the TLS options alone, not from the test's environment.
NO_WEB_URL = {"SHELLEXEC_WEB_URL": "", "SHELLEXEC_REST_PORT": ""}


@pytest.mark.slow
def test_the_url_printed_through_a_tls_front_door_is_its_https_page(
        front_door: FrontDoor, tmp_path: Path) -> None:
    finished = run_bridge(front_door.stack, tmp_path, SCRIPT, "--prompt", "hi",
                          "--server", front_door.address, "--tls-ca",
                          str(front_door.certificate), addresses=False, env=NO_WEB_URL)

    assert finished.code == 0, finished.stderr
    result = finished.result()
    page = f"https://{front_door.address}/"
    assert result["url"] == f"{page}?session={result['session_id']}"
    trusted = ssl.create_default_context(cafile=str(front_door.certificate))
    with urllib.request.urlopen(page, context=trusted, timeout=30) as answer:
        assert b"<title>shellexec</title>" in answer.read()


@pytest.mark.slow
@pytest.mark.parametrize("trust", ["another certificate", "the system's"])
def test_a_certificate_the_bridge_does_not_trust_is_said_at_once(
        front_door: FrontDoor, tmp_path: Path, trust: str) -> None:
    """Retried for the whole window as an outage, with a hint to start the service, and
    exit 3; now a usage error (exit 2) naming the certificate, long before the window."""
    tls = (["--tls-ca", str(front_door.another)] if trust == "another certificate"
           else ["--tls"])
    finished = run_bridge(front_door.stack, tmp_path, SCRIPT, "--prompt", "hi",
                          "--server", front_door.address, *tls, "--retry-for", "20",
                          addresses=False, env=NO_WEB_URL)

    assert finished.code == 2, finished.stderr
    assert (f"shellexec bridge: cannot reach the service at {front_door.address} over TLS: "
            "the service's certificate was not trusted: pass --tls-ca") in finished.stderr
    assert "service unreachable" not in finished.stderr
    assert "make run" not in finished.stderr
    assert finished.stdout == ""

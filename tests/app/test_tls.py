"""Optional TLS at the front door: with a certificate and key configured, Envoy answers REST,
the page and gRPC over HTTPS (checked against the certificate, generated here with the openssl
command), and a plaintext request is told to use HTTPS. The Python clients and the bridge
speak TLS to it when told to."""

from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
import yaml  # type: ignore[import-untyped]
from bridge.harness import run_bridge
from bridge.provider_scripts import steps
from service.test_front_door_access_log import envoy_lines

from shellexec.app import envoy
from shellexec.app.plaintext_refusal import MESSAGE as PLAINTEXT_MESSAGE
from shellexec.app.settings import Settings
from shellexec.client import AsyncShellExecClient, ShellExecClient
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.acp import codex_end, codex_start
from support.processes import wait_until
from support.stack import BIN, Stack

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.fixture
def tls_stack(stack_with: Callable[..., Stack], tmp_path: Path) -> tuple[Stack, Path]:
    cert, key = certificate(tmp_path)
    stack = stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_TLS_CERT_FILE=str(cert),
                       SHELLEXEC_TLS_KEY_FILE=str(key))
    return stack, cert


def test_the_front_door_speaks_https_with_the_configured_certificate(
        tls_stack: tuple[Stack, Path]) -> None:
    stack, cert = tls_stack
    token = stack.create_token("tls", "admin")
    trusted = ssl.create_default_context(cafile=str(cert))
    base = f"https://127.0.0.1:{stack.rest_port}"
    request = urllib.request.Request(
        f"{base}/api/v1/task-sessions", data=json.dumps({"task_id": "tls-task"}).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, context=trusted, timeout=30) as answer:
        session = json.load(answer)["session"]
    assert session["task_id"] == "tls-task"
    with urllib.request.urlopen(f"{base}/", context=trusted, timeout=30) as page:
        assert b"<title>shellexec</title>" in page.read()

    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    with grpc.secure_channel(f"127.0.0.1:{stack.rest_port}", credentials) as channel:
        answer = pb_grpc.ShellExecServiceStub(channel).GetSession(
            pb.GetSessionRequest(session_id=session["id"]),
            metadata=(("authorization", f"Bearer {token}"),), timeout=10)
    assert answer.session.id == session["id"]


def test_plain_http_is_told_to_use_https_and_an_untrusted_certificate_is_refused(
        tls_stack: tuple[Stack, Path]) -> None:
    """A plaintext request got no answer at all: curl said "Empty reply from server"."""
    stack, _ = tls_stack
    plain = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    plain.request("GET", "/api/v1/task-sessions")
    answer = plain.getresponse()
    assert answer.status == 400
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert json.loads(answer.read()) == {"code": 9, "message": PLAINTEXT_MESSAGE}
    plain.close()
    # Logged as every front-door request is: an operator sees who sends tokens in clear.
    assert wait_until(lambda: any(
        line.get("path") == "/api/v1/task-sessions" and line.get("http_status") == 400
        for line in envoy_lines(stack)), 30), "no front-door log line for the request"
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen(f"https://127.0.0.1:{stack.rest_port}/", timeout=10,
                               context=ssl.create_default_context())
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)


def test_the_python_clients_speak_tls_when_given_the_certificate(
        tls_stack: tuple[Stack, Path]) -> None:
    stack, cert = tls_stack
    token = stack.create_token("python-tls", "admin")
    front_door = f"127.0.0.1:{stack.rest_port}"
    with ShellExecClient(front_door, token=token, tls=cert) as client:
        session = client.create_session("tls-python")

    async def read_back() -> str:  # the certificates given as bytes, read once
        async with AsyncShellExecClient(front_door, token=token,
                                        tls=cert.read_bytes()) as client:
            return (await client.get_session(session.id)).id

    assert asyncio.run(read_back()) == session.id
    # The system's trusted certificates do not include this self-signed one.
    with ShellExecClient(front_door, token=token, tls=True, timeout=10) as client, \
            pytest.raises(grpc.RpcError) as refused:
        client.get_session(session.id)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_silent_connection_is_held_no_longer_with_tls_than_without(tmp_path: Path) -> None:
    """The TLS inspector waits for a connection's first bytes, 15 s by Envoy's default: a
    client that sent nothing was held 15 s where the connection manager closes it after 10."""
    cert, key = certificate(tmp_path)
    settings = Settings(tls_cert_file=str(cert), tls_key_file=str(key))
    [front_door] = [listener for listener in yaml.safe_load(envoy.render(settings, 50051))[
        "static_resources"]["listeners"] if listener["name"] == "front_door"]
    chains = front_door["filter_chains"]
    managers = [chain["filters"][0]["typed_config"] for chain in chains]
    assert {manager["request_headers_timeout"] for manager in managers} == {
        front_door["listener_filters_timeout"]}
    assert all(manager["access_log"] for manager in managers)


def test_a_plaintext_grpc_client_and_bridge_are_told_at_once_to_use_tls(
        tls_stack: tuple[Stack, Path], tmp_path: Path) -> None:
    """A gRPC client without TLS heard UNAVAILABLE ("Socket closed"), which it retries, and
    the bridge took the front door for a service that was down: it retried for the whole of
    --retry-for, then said the service was unreachable."""
    stack, _ = tls_stack
    front_door = f"127.0.0.1:{stack.rest_port}"
    with ShellExecClient(front_door, timeout=10) as client, \
            pytest.raises(grpc.RpcError) as refused:
        client.create_session("plaintext")
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.details() == PLAINTEXT_MESSAGE
    finished = run_bridge(stack, tmp_path, [{"stop": "end_turn"}], "--server", front_door,
                          "--prompt", "ls", "--retry-for", "600", addresses=False)
    assert finished.code == 3
    assert f"FAILED_PRECONDITION: {PLAINTEXT_MESSAGE}" in finished.stderr
    assert "unreachable" not in finished.stderr


def test_a_client_refuses_a_certificate_file_with_no_certificate_by_name(
        tmp_path: Path) -> None:
    (tmp_path / "key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    with pytest.raises(ValueError, match=r"tls: .*key\.pem holds no PEM certificate"):
        ShellExecClient("127.0.0.1:1", tls=tmp_path / "key.pem")
    with pytest.raises(FileNotFoundError):
        ShellExecClient("127.0.0.1:1", tls=tmp_path / "missing.pem")
    with pytest.raises(ValueError, match="tls: the bytes given hold no PEM certificate"):
        ShellExecClient("127.0.0.1:1", tls=b"not a certificate")


def test_the_bridge_records_through_a_front_door_with_a_certificate(
        tls_stack: tuple[Stack, Path], tmp_path: Path) -> None:
    stack, cert = tls_stack
    token = stack.create_token("bridge-tls", "ingest")
    script = [*steps([codex_start("c1", "ls"), codex_end("c1", "a\n", 0)]), {"stop": "end_turn"}]
    finished = run_bridge(stack, tmp_path, script, "--server", f"127.0.0.1:{stack.rest_port}",
                          "--tls-ca", str(cert), "--prompt", "ls", "--retry-for", "10",
                          env={"SHELLEXEC_TOKEN": token}, addresses=False)
    assert finished.code == 0, finished.stderr
    reader = stack.create_token("bridge-tls-reader", "read")
    with ShellExecClient(stack.grpc_target, token=reader) as client:
        messages = client.messages(finished.result()["session_id"])
    assert [m.metadata.normalized.shell_exec.command for m in messages
            if m.type == "tool_execute"] == ["ls"]


@pytest.mark.parametrize(("settings", "complaint"), [
    ({"SHELLEXEC_TLS_CERT_FILE": "cert.pem"}, "set together"),
    ({"SHELLEXEC_TLS_CERT_FILE": "missing.pem", "SHELLEXEC_TLS_KEY_FILE": "missing.key"},
     "no such file"),
])
def test_an_incomplete_tls_setting_is_refused_by_name(
        tmp_path: Path, settings: dict[str, str], complaint: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
           **settings}
    done = subprocess.run([BIN / "shellexec", "serve"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "SHELLEXEC_TLS_CERT_FILE" in done.stderr
    assert complaint in done.stderr


@pytest.mark.parametrize(("pair", "complaint"), [
    (("cert", "other_key"), "SHELLEXEC_TLS_KEY_FILE: no unencrypted PEM private key"),
    (("cert", "encrypted_key"), "SHELLEXEC_TLS_KEY_FILE: no unencrypted PEM private key"),
    (("key", "key"), "SHELLEXEC_TLS_CERT_FILE: no PEM certificate could be read"),
])
def test_a_certificate_and_key_that_envoy_cannot_load_are_refused_by_name(
        tmp_path: Path, pair: tuple[str, str], complaint: str) -> None:
    """Envoy's own refusal named no setting, and came after the server had started."""
    cert, key = certificate(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    encrypted = tmp_path / "encrypted.pem"
    subprocess.run(["openssl", "rsa", "-in", str(key), "-aes256", "-passout", "pass:secret",
                    "-out", str(encrypted)], check=True, capture_output=True, timeout=60)
    files = {"cert": cert, "key": key, "other_key": certificate(other)[1],
             "encrypted_key": encrypted}
    env = {"PATH": "/usr/bin:/bin", "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
           "SHELLEXEC_TLS_CERT_FILE": str(files[pair[0]]),
           "SHELLEXEC_TLS_KEY_FILE": str(files[pair[1]])}
    done = subprocess.run([BIN / "shellexec", "up"], cwd=tmp_path, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith(f"shellexec: {complaint}")
    assert not (tmp_path / "x.db").exists()

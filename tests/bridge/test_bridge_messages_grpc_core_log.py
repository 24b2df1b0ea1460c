"""The bridge's stderr is its own escaped log and the agent's `[agent] ` lines, nothing else:
gRPC's C core wrote a line of its own there on each failed TLS handshake (`I1206
12:49:24.647503 6342 ssl_transport_security.cc:2563] Handshake failed ...`), raw, and one every
attempt while a handshake that once worked was retried for --retry-for. A user who asks for
gRPC's log (GRPC_VERBOSITY, GRPC_TRACE) still gets it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge.harness import run_bridge
from bridge.provider_scripts import say

from support.stack import Stack, running_stack

pytestmark = pytest.mark.slow

# A line of gRPC's C core (absl's format): severity and date, time, thread, file:line].
GRPC_CORE_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ \S+:\d+\] ", re.MULTILINE)
SCRIPT = [{"update": say("over TLS")}]
# The page's URL must come from the TLS options alone, not from the test's environment.
NO_WEB_URL = {"SHELLEXEC_WEB_URL": "", "SHELLEXEC_REST_PORT": ""}


@pytest.fixture(scope="module")
def front_door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack whose front door serves TLS with a self-signed certificate no one trusts."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    folder = tmp_path_factory.mktemp("bridge-grpc-log")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    with running_stack(folder, SHELLEXEC_TLS_CERT_FILE=str(cert),
                       SHELLEXEC_TLS_KEY_FILE=str(key)) as stack:
        yield stack


def _untrusted(stack: Stack, tmp_path: Path, env: dict[str, str]) -> str:
    """The stderr of a bridge that meets the front door's certificate untrusted (`--tls`
    checks it against the system's certificates) and says so, exit 2."""
    finished = run_bridge(stack, tmp_path, SCRIPT, "--prompt", "hi",
                          "--server", f"127.0.0.1:{stack.rest_port}", "--tls",
                          "--retry-for", "20", addresses=False, env={**NO_WEB_URL, **env})
    assert finished.code == 2, finished.stderr
    assert "the service's certificate was not trusted: pass --tls-ca" in finished.stderr
    return finished.stderr


def test_a_failed_tls_handshake_leaves_no_grpc_line_on_stderr(front_door: Stack,
                                                               tmp_path: Path) -> None:
    stderr = _untrusted(front_door, tmp_path, {"GRPC_VERBOSITY": "", "GRPC_TRACE": ""})
    assert GRPC_CORE_LINE.search(stderr) is None, stderr
    assert [line for line in stderr.splitlines()
            if not line.startswith(("shellexec bridge: ", "[agent] "))] == [], stderr


def test_grpc_s_log_is_left_to_a_user_who_asks_for_it(front_door: Stack,
                                                      tmp_path: Path) -> None:
    stderr = _untrusted(front_door, tmp_path, {"GRPC_VERBOSITY": "INFO"})
    assert GRPC_CORE_LINE.search(stderr) is not None, stderr


def test_the_agent_gets_no_grpc_setting_the_user_did_not_make(stack: Stack,
                                                              tmp_path: Path) -> None:
    """The entry point quiets gRPC's core with GRPC_VERBOSITY=NONE, and left it set: an
    agent given `--env GRPC_VERBOSITY` got a NONE the user never set. It is taken out again
    once gRPC has read it."""
    if "GRPC_VERBOSITY" in os.environ:
        pytest.skip("GRPC_VERBOSITY is set in this test's environment")
    finished = run_bridge(stack, tmp_path, SCRIPT, "--env", "GRPC_VERBOSITY", "--prompt", "hi",
                          report_env=["GRPC_VERBOSITY"])
    assert finished.code == 0, finished.stderr
    assert finished.record["env"]["GRPC_VERBOSITY"] is None
    assert "--env GRPC_VERBOSITY: not set" in finished.stderr

"""The Go client's own tests (tests/clients/go/clienttest: the token on every call, errors
keeping their status and google.rpc details, plain Go values as updates, the context bounding
each call, paging and deletion, and the tokens and timeouts Dial refuses), run by `go test`
against a stack with authentication on, straight to the server and through Envoy; and the unit
tests inside the client's own module (clients/go: its bounded reconnect backoff, and the
text that is not UTF-8 it refuses before sending)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.stack import Stack, running_stack

GO_MODULE = Path(__file__).resolve().parent / "go"
CLIENT_MODULE = Path(__file__).resolve().parents[2] / "clients" / "go"

pytestmark = pytest.mark.slow  # its own stack, and `go test` builds the tests


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("go-client-auth"), SHELLEXEC_AUTH="on") as stack:
        yield stack


def test_the_go_client_tests_pass(secured: Stack) -> None:
    env = {**os.environ, "SHELLEXEC_TEST_TOKEN": secured.create_token("go-client", "admin"),
           "SHELLEXEC_TEST_TARGETS": f"{secured.grpc_target},127.0.0.1:{secured.rest_port}"}
    tested = subprocess.run(["go", "test", "-count=1", "-v", "./clienttest/"], cwd=GO_MODULE,
                            env=env, capture_output=True, text=True, timeout=300, check=False)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.count("--- PASS") == 8, tested.stdout


def test_the_go_client_s_unit_tests_pass() -> None:
    tested = subprocess.run(["go", "test", "-count=1", "-v", "."], cwd=CLIENT_MODULE,
                            capture_output=True, text=True, timeout=300, check=False)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.count("--- PASS") == 6, tested.stdout

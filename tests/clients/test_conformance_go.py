"""The conformance scenario (tests/clients/scenario.json, described in its README) played by
the Go client (clients/go) through its runner, tests/clients/go/cmd/conformance, straight to
the server and through Envoy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.stack import Stack

HERE = Path(__file__).resolve().parent
GO_MODULE = HERE / "go"


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary = tmp_path_factory.mktemp("conformance-go") / "conformance"
    subprocess.run(["go", "build", "-o", str(binary), "./cmd/conformance"], cwd=GO_MODULE,
                   check=True)
    return binary


@pytest.mark.parametrize("door", ["direct", "envoy"])
def test_the_scenario_plays_as_written(runner: Path, stack: Stack, door: str) -> None:
    target = stack.grpc_target if door == "direct" else f"127.0.0.1:{stack.rest_port}"
    played = subprocess.run([str(runner), "-target", target,
                             "-scenario", str(HERE / "scenario.json")],
                            capture_output=True, text=True, timeout=180, check=False)
    assert played.returncode == 0, played.stdout + played.stderr
    assert "every step passed" in played.stdout

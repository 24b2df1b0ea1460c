"""The conformance scenario (tests/clients/scenario.json, described in its README) played by
the Java client (clients/java), straight to the server and through Envoy.

Maven's wrapper builds the client and its runner once (fetching Maven and the dependencies on
a fresh machine); each case then runs the runner on one address.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.stack import Stack

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
JAVA_CLIENT = ROOT / "clients" / "java"
SCENARIO = Path(__file__).parent / "scenario.json"
RUNNER = "com.shellexec.conformance.ConformanceRunner"
CLASSPATH_FILE = JAVA_CLIENT / "target" / "conformance.classpath"


@pytest.fixture(scope="module")
def classpath() -> str:
    """The compiled client, its runner and their dependencies, built by the Maven wrapper."""
    subprocess.run(
        ["./mvnw", "-q", "-B", "test-compile", "dependency:build-classpath",
         "-Dmdep.includeScope=test", f"-Dmdep.outputFile={CLASSPATH_FILE}"],
        cwd=JAVA_CLIENT, check=True, timeout=600)
    target = JAVA_CLIENT / "target"
    return ":".join((str(target / "classes"), str(target / "test-classes"),
                     CLASSPATH_FILE.read_text().strip()))


@pytest.mark.parametrize("route", ["direct", "envoy"])
def test_the_scenario_plays_as_written(route: str, classpath: str, stack: Stack) -> None:
    address = stack.grpc_target if route == "direct" else f"127.0.0.1:{stack.rest_port}"
    result = subprocess.run(["java", "-cp", classpath, RUNNER, address, str(SCENARIO)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"passed against {address}" in result.stdout

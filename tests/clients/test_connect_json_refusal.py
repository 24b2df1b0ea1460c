"""A real Connect client (connect-es in Node) using the JSON codec hears why it is refused:
the front door's 415 carries Connect's error body, so the client reports INVALID_ARGUMENT and
the message naming the binary codec, not an unknown error (ADR 0100)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.stack import Stack

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"
TIMEOUT_S = 120


@pytest.fixture(scope="module")
def refusal_script() -> Path:
    esbuild = PACKAGE / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        pytest.fail("clients/typescript/node_modules is missing: run `make check-generated`")
    bundle = PACKAGE / "build" / "json-connect-refusal.mjs"
    subprocess.run([str(esbuild), "test/json-connect-refusal.ts", "--bundle", "--platform=node",
                    "--format=esm", f"--outfile={bundle}", "--log-level=warning"],
                   cwd=PACKAGE, check=True, timeout=TIMEOUT_S)
    return bundle


def test_a_json_connect_client_reports_invalid_argument(stack: Stack,
                                                        refusal_script: Path) -> None:
    result = subprocess.run(["node", str(refusal_script), f"http://127.0.0.1:{stack.rest_port}"],
                            capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    code, message = result.stdout.strip().split(": ", 1)
    assert code == "InvalidArgument"
    assert "application/proto" in message

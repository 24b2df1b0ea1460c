"""Schemathesis against the live REST port, from the OpenAPI document Envoy serves: no 5xx, and
no response the document contradicts (status, content type, headers, body schema), and no
request the document allows refused (ADR 0110).

The watch route never ends, so it is left out (test_openapi_document.py checks its events). A
fixed seed and a bounded number of examples per route keep the run short and repeatable.
Left out as checks, with why: `negative_data_rejection`, since the proto3 JSON mapping accepts
more than any Swagger 2.0 document can say (`null` for any field, camelCase names, unknown
fields, a lone object for a repeated field); `unsupported_method`, since Envoy's HTTP/1 codec
answers a method it does not know (`QUERY`) with 400 before any route (known methods get the
405 routes, tests/app/test_method_not_allowed_routes.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shellexec.app.openapi_document import OPENAPI_PATH, WATCH_PATH

from support.stack import Stack

pytestmark = pytest.mark.slow

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
HOOKS = Path(__file__).with_name("schemathesis_hooks.py")
EXAMPLES_PER_ROUTE = 20
SEED = 9
DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def _operations_fuzzed() -> int:
    """The document's operations but the watch route's, each of which the run must test."""
    paths = json.loads(DOCUMENT.read_text())["paths"]
    return sum(1 for path, item in paths.items() if path != WATCH_PATH
               for method in item if method in ("get", "post", "put", "patch", "delete"))


def _run(stack: Stack, report: Path) -> subprocess.CompletedProcess[str]:
    command = [
        str(SCHEMATHESIS), "--no-color", "run", f"{stack.rest_url}{OPENAPI_PATH}",
        "--url", stack.rest_url,
        "--exclude-path", WATCH_PATH,
        "--checks", "all",
        "--exclude-checks", "negative_data_rejection,unsupported_method",
        "--max-examples", str(EXAMPLES_PER_ROUTE), "--seed", str(SEED),
        "--generation-database", "none", "--workers", "1",
        "--report", "junit", "--report-dir", str(report),
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": HOOKS.stem,
           "PYTHONPATH": os.pathsep.join(filter(None, (str(HOOKS.parent),
                                                        os.environ.get("PYTHONPATH"))))}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=report, timeout=600,
                          check=False)


def test_the_live_rest_port_keeps_to_its_openapi_document(own_stack: Stack,
                                                          tmp_path: Path) -> None:
    result = _run(own_stack, tmp_path)
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-2000:]
    assert f"Tested: {_operations_fuzzed()}" in result.stdout, result.stdout[-2000:]

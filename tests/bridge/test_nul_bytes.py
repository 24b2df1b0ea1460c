"""A NUL byte in a path, command line, directory or environment of an agent's request: no OS
call can take one, so the bridge answers "invalid params" naming the field, instead of the
SDK's traceback and internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.hostile import INVALID_PARAMS, error_of, request, run_raw

from support.stack import Stack

pytestmark = pytest.mark.slow

BAD = "a\u0000b"


def test_a_nul_byte_is_invalid_params_naming_the_field(stack: Stack, tmp_path: Path) -> None:
    asks = [  # (the field named, its value, the request)
        ("path", f"/tmp/{BAD}", request("fs/read_text_file", path=f"/tmp/{BAD}")),
        ("path", f"/tmp/{BAD}",
         request("fs/write_text_file", path=f"/tmp/{BAD}", content="x")),
        ("command", f"echo {BAD}", request("terminal/create", command=f"echo {BAD}")),
        ("args[1]", BAD, request("terminal/create", command="echo", args=["ok", BAD])),
        ("cwd", BAD, request("terminal/create", command="true", cwd=BAD)),
        ("env[0].value", BAD,
         request("terminal/create", command="true", env=[{"name": "X", "value": BAD}])),
    ]
    finished, record = run_raw(stack, tmp_path, [step for _, _, step in asks],
                               "--allow-fs-read", "--allow-fs-write", "--host-terminals")

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    assert [error_of(answer) for answer in record["answers"]] == [
        (INVALID_PARAMS, {field: value, "reason": "contains a NUL byte"})
        for field, value, _ in asks]

"""Review 9: a NUL byte in a path, command line, directory or environment is "invalid params"
naming the field, but a lone surrogate (`"\\ud800"` in the agent's JSON) is just as impossible
for the OS to take (it cannot be encoded for a system call) and still ends in the SDK's
catch-all: a traceback on the bridge's stderr and an internal error naming no field."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.hostile import INVALID_PARAMS, error_of, request, run_raw

from support.stack import Stack

pytestmark = pytest.mark.slow

BAD = "a\ud800b"


def test_a_lone_surrogate_is_invalid_params_naming_the_field(stack: Stack,
                                                             tmp_path: Path) -> None:
    asks = [  # (the field named, the request)
        ("path", request("fs/read_text_file", path=f"/tmp/{BAD}")),
        ("path", request("fs/write_text_file", path=f"/tmp/{BAD}", content="x")),
        ("command", request("terminal/create", command=f"echo {BAD}")),
        ("args[1]", request("terminal/create", command="echo", args=["ok", BAD])),
        ("cwd", request("terminal/create", command="true", cwd=BAD)),
        ("env[0].value",
         request("terminal/create", command="true", env=[{"name": "X", "value": BAD}])),
    ]
    finished, record = run_raw(stack, tmp_path, [step for _, step in asks],
                               "--allow-fs-read", "--allow-fs-write", "--host-terminals")

    assert finished.code == 0, finished.stderr[-3000:]
    answers = [error_of(answer) for answer in record["answers"]]
    assert [(code, field in data) for (code, data), (field, _) in zip(answers, asks,
                                                                       strict=True)] == [
        (INVALID_PARAMS, True)] * len(asks), answers
    assert "Traceback" not in finished.stderr

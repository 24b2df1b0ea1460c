"""A NUL byte or a lone surrogate in a path, command line, directory or environment of an
agent's request: no system call can take either (Python raises ValueError or
UnicodeEncodeError), so the bridge answers "invalid params" naming the field, instead of the
SDK's traceback and an internal error naming nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.hostile import INVALID_PARAMS, error_of, request, run_raw

from shellexec.bridge.os_text import QUOTED_CHARS, os_text_problem

from support.stack import Stack

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("bad", ["a\u0000b", "a\ud800b"], ids=["nul-byte", "lone-surrogate"])
def test_text_the_os_cannot_take_is_invalid_params_naming_the_field(
        stack: Stack, tmp_path: Path, bad: str) -> None:
    asks = [  # (the field named, its value, the request)
        ("path", f"/tmp/{bad}", request("fs/read_text_file", path=f"/tmp/{bad}")),
        ("path", f"/tmp/{bad}",
         request("fs/write_text_file", path=f"/tmp/{bad}", content="x")),
        ("command", f"echo {bad}", request("terminal/create", command=f"echo {bad}")),
        ("args[1]", bad, request("terminal/create", command="echo", args=["ok", bad])),
        ("cwd", bad, request("terminal/create", command="true", cwd=bad)),
        ("env[0].value", bad,
         request("terminal/create", command="true", env=[{"name": "X", "value": bad}])),
        # A long one is quoted by its start: an 8 MiB heredoc with a NUL came back whole.
        ("command", f"{'y' * QUOTED_CHARS}… ({QUOTED_CHARS + 100_000 + len(bad)} characters)",
         request("terminal/create", command="y" * (QUOTED_CHARS + 100_000) + bad)),
    ]
    finished, record = run_raw(stack, tmp_path, [step for _, _, step in asks],
                               "--allow-fs-read", "--allow-fs-write", "--host-terminals")

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    reason = os_text_problem(bad)
    assert reason is not None
    assert [error_of(answer) for answer in record["answers"]] == [
        (INVALID_PARAMS, {field: value, "reason": reason}) for field, value, _ in asks]

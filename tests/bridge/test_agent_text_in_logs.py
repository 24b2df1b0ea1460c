"""What the agent names (the files it asks for, its own name, a hosted command's directory) is
quoted in the bridge's log, so a newline in it cannot forge a log line such as a fake
"published" summary; here, through the file requests."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.hostile import request, run_raw

from support.stack import Stack

pytestmark = pytest.mark.slow

FORGED = "shellexec bridge: published 99 updates; 0 refused"


def test_a_newline_in_a_requested_path_stays_inside_its_log_line(stack: Stack,
                                                                  tmp_path: Path) -> None:
    inside = tmp_path / f"notes\n{FORGED}"
    inside.write_text("x\n")
    asks = [request("fs/read_text_file", path=str(inside)),
            request("fs/read_text_file", path=f"/etc/passwd\n{FORGED}")]
    finished, _ = run_raw(stack, tmp_path, asks, "--allow-fs-read")

    assert finished.code == 0, finished.stderr[-3000:]
    lines = finished.stderr.splitlines()
    assert FORGED not in lines
    assert sum("agent asked to read" in line and "\\n" + FORGED in line for line in lines) == 2

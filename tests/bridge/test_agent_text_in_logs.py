"""What the agent names (the files it asks for, its own name, a hosted command's directory, a
permission option) is quoted in the bridge's log, and what it says (an error's message and
data, its stderr) escaped, so a newline in it cannot forge a log line such as a fake
"published" summary, nor a carriage return hide the `[agent] ` prefix."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.harness import Finished
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


def _lines_holding(finished: Finished, text: str) -> list[str]:
    return [line for line in finished.stderr.splitlines() if text in line]


def test_a_newline_in_a_permission_option_id_stays_inside_its_log_line(
        stack: Stack, tmp_path: Path) -> None:
    asks = [request("session/request_permission",
                    toolCall={"toolCallId": "p1", "title": "ls", "kind": "execute"},
                    options=[{"optionId": f"yes\n{FORGED}", "name": "Allow",
                              "kind": "allow_once"}])]
    finished, record = run_raw(stack, tmp_path, asks)

    assert finished.code == 0, finished.stderr[-3000:]
    assert record["answers"][0]["result"]["outcome"]["optionId"] == f"yes\n{FORGED}"
    assert FORGED not in finished.stderr.splitlines()
    [answered] = _lines_holding(finished, "permission asked for 'ls'")
    assert answered.endswith(f"selected 'yes\\n{FORGED}'")


@pytest.mark.parametrize("stage", ["initialize", "session/prompt"])
def test_a_newline_in_an_agent_s_error_stays_inside_its_log_line(
        stack: Stack, tmp_path: Path, stage: str) -> None:
    error = {"code": -32603, "message": f"oops\n{FORGED}", "data": f"\r\n{FORGED}"}
    step = "initialize_error" if stage == "initialize" else "prompt_error"
    finished, _ = run_raw(stack, tmp_path, [{step: error}])

    assert finished.code == 1, finished.stderr[-3000:]
    assert FORGED not in finished.stderr.splitlines()
    [failed] = _lines_holding(finished, f"agent failed during {stage}")
    assert f"oops\\n{FORGED} \\r\\n{FORGED}" in failed


def test_the_agent_s_stderr_cannot_rewrite_or_forge_a_log_line(stack: Stack,
                                                               tmp_path: Path) -> None:
    """A carriage return on a terminal goes back to the line's start, over `[agent] `; an
    escape sequence clears it. Both are shown escaped; a tab and other text stay, and a
    line's `\\r\\n` end is a line end."""
    said = [{"stderr": f"progress 50%\r{FORGED}\n"}, {"stderr": "\x1b[2K\x1b[31mred\ttab\n"},
            {"stderr": "windows line\r\n"}, {"stderr": "caf\u00e9"}]
    finished, _ = run_raw(stack, tmp_path, [*said, {"stderr": "\n"}])

    assert finished.code == 0, finished.stderr[-3000:]
    assert FORGED not in finished.stderr.splitlines()
    relayed = _lines_holding(finished, "[agent] ")
    assert relayed == [f"[agent] progress 50%\\r{FORGED}", "[agent] \\x1b[2K\\x1b[31mred\ttab",
                       "[agent] windows line", "[agent] caf\u00e9"]

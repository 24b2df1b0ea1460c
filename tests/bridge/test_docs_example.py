"""docs/bridge.md's "Trying it without an agent" runs as written: its shell block, against a
real stack (its files in the test's own folder instead of /tmp), gives the session the page
is said to show."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from shellexec.client import ShellExecClient

from support.stack import Stack

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HEADING = "### Trying it without an agent"


def documented_block() -> str:
    """The first shell block after the section's heading."""
    text = (ROOT / "docs" / "bridge.md").read_text()
    section = text[text.index(HEADING):]
    found = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert found is not None, f"no shell block under {HEADING!r}"
    return found.group(1)


def test_the_documented_script_runs_and_stores_one_failed_command(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    block = documented_block().replace("/tmp/", f"{tmp_path}/")
    ran = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=ROOT, env=stack.env,
                         capture_output=True, text=True, timeout=120)

    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout.strip().splitlines()[-1])
    assert result["stop_reason"] == "end_turn"
    assert result["url"].endswith(f"?session={result['session_id']}")
    messages = client.messages(result["session_id"])
    assert [(message.author_type, message.type) for message in messages] == [
        ("user", "message"), ("agent", "message"), ("agent", "tool_execute"),
        ("agent", "message")]
    command = messages[2].metadata.normalized.shell_exec
    assert (command.command, command.output.exit_code, command.result) == (
        "pytest -q", 1, "failure")
    assert (tmp_path / "agent-record.json").exists()

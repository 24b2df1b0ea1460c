"""An agent that exits while a process it started in a session of its own (`setsid`) still
holds its stdout: the bridge goes on once the agent itself exited, and fails what it waited
for (`initialize`, the prompt) as the agent's exit, as it does when the pipe closes. It waited
for that process instead: for as long as it ran, for ever for a daemon."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge.harness import agent_command, assert_recorded, launch
from bridge.provider_scripts import say

from shellexec.client import ShellExecClient

from support.processes import gone
from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Build it."
# The process left behind holds the agent's stdout this long: far longer than the test waits.
HOLDER = "sleep 300"
# How long the bridge may take to finish: generous, and far shorter than the holder lives.
FINISH_SECONDS = 60.0


def _holding(pid_file: Path) -> str:
    """Shell words that start the holder in a session of its own, its stdout the shell's (the
    agent's), its stderr elsewhere, and write its pid to `pid_file`."""
    return f"setsid {HOLDER} 2>/dev/null & echo $! > {pid_file}"


@contextlib.contextmanager
def _killed_at_the_end(pid_file: Path) -> Iterator[None]:
    """Kills the holder whose pid `pid_file` names once the test is done, by that pid."""
    try:
        yield
    finally:
        if pid_file.exists():
            pid = int(pid_file.read_text())
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/cmdline").read_bytes() == HOLDER.encode().replace(
                        b" ", b"\0") + b"\0":
                    os.kill(pid, signal.SIGKILL)


def _held(pid_file: Path) -> bool:
    """Whether the holder was started and still runs (so the pipe was still open)."""
    return pid_file.exists() and not gone(int(pid_file.read_text()))


def test_an_agent_dying_during_the_prompt_fails_the_turn_though_its_output_is_held(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    pid_file = tmp_path / "holder.pid"
    updates = [say("working")]
    agent = agent_command(tmp_path, [*({"update": u} for u in updates), {"exit": 3}], "agent")
    command = ["/bin/sh", "-c", f"{_holding(pid_file)}; exec {agent[0]}"]
    with _killed_at_the_end(pid_file):
        finished = launch(stack, tmp_path, [], "--agent", "codex", "--prompt", PROMPT,
                          command=command).finish_unhung(FINISH_SECONDS)
        assert _held(pid_file), "the holder was gone: the pipe closed, and this tests nothing"

    assert finished.code == 1, finished.stderr
    assert "agent failed during session/prompt" in finished.stderr
    assert "agent exited with status 3" in finished.stderr
    result = finished.result()
    assert result["stop_reason"] == "agent_error"
    # What the agent sent before it died is recorded.
    assert_recorded(client, result["session_id"], PROMPT, updates, "codex")


def test_an_agent_exiting_before_initialize_fails_at_once_though_its_output_is_held(
        stack: Stack, tmp_path: Path) -> None:
    pid_file = tmp_path / "holder.pid"
    command = ["/bin/sh", "-c", f"{_holding(pid_file)}; exit 4"]
    with _killed_at_the_end(pid_file):
        finished = launch(stack, tmp_path, [], "--prompt", PROMPT,
                          command=command).finish_unhung(FINISH_SECONDS)
        assert _held(pid_file), "the holder was gone: the pipe closed, and this tests nothing"

    assert finished.code == 1, finished.stderr
    assert "agent failed during initialize" in finished.stderr
    assert "agent exited with status 4" in finished.stderr
    assert "still waiting" not in finished.stderr
    assert finished.stdout == ""

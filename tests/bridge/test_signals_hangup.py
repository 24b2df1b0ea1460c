"""SIGHUP (the terminal closed, an ssh connection dropped) is a cancel like SIGINT and SIGTERM:
the agent is sent `session/cancel`, what it sent is published, the turn is completed as
cancelled and the bridge exits 129. It killed the bridge outright, and the session's turn, with
its running command, stayed open for ever. After a real hangup the terminal is gone, and
writing to it fails: the run still ends the same way."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bridge.harness import Step, assert_recorded, bridge_command, launch
from bridge.provider_scripts import say, steps, unfinished

from shellexec.client import ShellExecClient

from support.processes import wait_until
from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Run the build."
# Bounds of the waits below: each ends as soon as its condition holds.
STARTED_SECONDS = 30.0
FINISH_SECONDS = 60.0
# Runs the bridge with SIGHUP's default disposition, whatever this test process inherited (a
# run under `nohup` ignores it, and so would the bridge, rightly: the last test).
HANGING_UP = [sys.executable, "-c", "import os, signal, sys; "
              "signal.signal(signal.SIGHUP, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"]


def _assert_turn_completed_cancelled(client: ShellExecClient, session_id: str,
                                     updates: list[dict[str, object]]) -> None:
    session = client.get_session(session_id)
    assert (session.state, session.current_turn_id) == ("idle", "")
    assert_recorded(client, session_id, PROMPT, updates, "codex")
    [tool] = [m for m in client.messages(session_id) if m.type == "tool_execute"]
    assert tool.metadata.status == "cancelled"


def test_sighup_cancels_the_prompt_and_completes_the_turn_as_cancelled(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    updates = [say("Building. "), *unfinished("codex", "hup-1")]
    script = [*steps(updates), {"mark": "streaming"}, {"wait_for_cancel": 30}]
    bridge = launch(stack, tmp_path, script, "--agent", "codex", "--prompt", PROMPT,
                    wrapper=HANGING_UP)
    bridge.wait_for_mark("streaming")
    bridge.process.send_signal(signal.SIGHUP)
    finished = bridge.finish_unhung(FINISH_SECONDS)

    assert finished.code == 129, finished.stderr
    assert "SIGHUP: cancelling the agent's prompt" in finished.stderr
    assert len(finished.record["session/cancel"]) == 1
    result = finished.result()
    assert result["stop_reason"] == "cancelled"
    _assert_turn_completed_cancelled(client, result["session_id"], updates)


def _read_until(master: int, pattern: re.Pattern[str], seconds: float) -> re.Match[str]:
    """Reads the terminal's output until `pattern` matches it."""
    seen = ""
    deadline = time.monotonic() + seconds
    while (found := pattern.search(seen)) is None:
        assert time.monotonic() < deadline, f"no {pattern.pattern!r} in {seen!r}"
        seen += os.read(master, 65536).decode(errors="replace")
    return found


def _marks(record: Path) -> list[str]:
    """The marks the fake agent reached so far (its record is rewritten whole each time)."""
    try:
        marks: list[str] = json.loads(record.read_text()).get("marks", [])
    except (OSError, ValueError):
        return []
    return marks


def test_a_hangup_whose_terminal_is_gone_still_records_the_turn(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    """The bridge's stdout and stderr are a terminal that hangs up (its other end closes,
    so every write fails with EIO) before SIGHUP arrives."""
    updates = [say("Building. "), *unfinished("codex", "hup-2")]
    script = [*steps(updates), {"mark": "streaming"}, {"wait_for_cancel": 30}]
    command = bridge_command(stack, tmp_path, script, "--agent", "codex", "--prompt", PROMPT)
    master, terminal = pty.openpty()
    try:
        process = subprocess.Popen([*HANGING_UP, *command.argv], stdin=subprocess.DEVNULL,
                                   stdout=terminal, stderr=terminal)
    finally:
        os.close(terminal)
    try:
        session_id = _read_until(master, re.compile(r"recording into session (ses_\w+)"),
                                 STARTED_SECONDS)[1]
        assert wait_until(lambda: "streaming" in _marks(command.record_path), STARTED_SECONDS)
    finally:
        os.close(master)  # the terminal hangs up
    process.send_signal(signal.SIGHUP)
    try:
        code = process.wait(timeout=FINISH_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("the bridge hung after the hangup") from None

    assert code == 129
    _assert_turn_completed_cancelled(client, session_id, updates)


def test_a_bridge_started_with_sighup_ignored_keeps_ignoring_it(
        stack: Stack, tmp_path: Path) -> None:
    """`nohup shellexec bridge …` asks the bridge to outlive the terminal: a hangup is no
    cancel then. SIGHUP is sent before SIGTERM (and of two pending signals the lower-numbered
    is handled first), so a handled SIGHUP would be the run's first signal (129)."""
    nohup = shutil.which("nohup")
    if nohup is None:
        pytest.skip("no nohup(1) here")
    script: list[Step] = [{"update": say("Building. ")}, {"mark": "streaming"},
                          {"wait_for_cancel": 30}]
    bridge = launch(stack, tmp_path, script, "--prompt", PROMPT, wrapper=[nohup])
    bridge.wait_for_mark("streaming")
    bridge.process.send_signal(signal.SIGHUP)
    bridge.process.send_signal(signal.SIGTERM)
    finished = bridge.finish_unhung(FINISH_SECONDS)

    assert finished.code == 143, finished.stderr
    assert "SIGTERM: cancelling the agent's prompt" in finished.stderr
    assert "SIGHUP" not in finished.stderr
    assert finished.result()["stop_reason"] == "cancelled"

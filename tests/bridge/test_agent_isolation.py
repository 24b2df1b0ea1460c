"""What a hostile agent, running as the bridge's user, cannot reach of the bridge: its
environment through /proc (the filter of ADR 0032 decides what the agent gets), and a life
after the bridge was SIGKILLed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from bridge.hostile import Step, launch_raw, read_record, request, run_raw, update
from bridge.provider_scripts import say

from support.stack import Stack

pytestmark = pytest.mark.slow

# Bounds of the waits below: each ends as soon as its condition holds.
STARTED_SECONDS = 30.0
GONE_SECONDS = 10.0


def _as_an_ordinary_user() -> list[str]:
    """Run as root, the bridge and its agent would hold every capability, and a process with
    CAP_SYS_PTRACE reads any /proc/<pid>/environ: drop them all, so that the agent is what it
    is on a developer's machine, the same user without privileges."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv to drop the capabilities")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]


def test_the_agent_cannot_read_what_the_bridge_keeps_out_of_its_environment(
        stack: Stack, tmp_path: Path) -> None:
    secrets = {"AWS_SECRET_ACCESS_KEY": "aws-secret", "SHELLEXEC_TOKEN": "shx-token"}
    script: list[Step] = [{"environ_of_parent": sorted(secrets)}]
    finished, record = run_raw(stack, tmp_path, script, env=secrets,
                               wrapper=_as_an_ordinary_user())

    assert finished.code == 0, finished.stderr[-3000:]
    assert record["environ_of_parent"] == []


def _gone(pid: int) -> bool:
    """Whether the process ended (a zombie nobody reaped has ended too)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_an_agent_that_ignores_its_input_does_not_outlive_a_killed_bridge(
        stack: Stack, tmp_path: Path) -> None:
    script: list[Step] = [update(say("working")), {"hang": 3 * GONE_SECONDS}]
    launched, record_path = launch_raw(stack, tmp_path, script)
    pid = 0
    try:
        assert _wait_until(lambda: record_path.exists()
                           and 0 in read_record(record_path)["done"], STARTED_SECONDS), (
            launched.stderr_path.read_text()[-3000:])
        pid = read_record(record_path)["pid"]
        launched.process.send_signal(signal.SIGKILL)
        launched.process.wait()

        assert _wait_until(lambda: _gone(pid), GONE_SECONDS), "the agent outlived the bridge"
    finally:
        launched.process.kill()
        launched.process.wait()
        if pid and not _gone(pid):
            os.kill(pid, signal.SIGKILL)


def _processes_running(command_line: str) -> list[int]:
    """The pids whose command line is exactly `command_line` (split at spaces)."""
    wanted = command_line.encode().replace(b" ", b"\0") + b"\0"
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "cmdline").read_bytes() == wanted and not _gone(int(entry.name)):
                    pids.append(int(entry.name))
    return pids


def test_a_hosted_terminal_does_not_outlive_a_killed_bridge(stack: Stack,
                                                            tmp_path: Path) -> None:
    sleeper = f"sleep {3 * GONE_SECONDS + os.getpid() % 1000 / 1000:.3f}"  # this run's own
    script: list[Step] = [request("terminal/create", command=f"exec {sleeper}"),
                          {"hang": 3 * GONE_SECONDS}]
    launched, record_path = launch_raw(stack, tmp_path, script, "--host-terminals")
    pids: list[int] = []
    try:
        assert _wait_until(lambda: record_path.exists()
                           and 0 in read_record(record_path)["done"], STARTED_SECONDS), (
            launched.stderr_path.read_text()[-3000:])
        assert _wait_until(lambda: len(_processes_running(sleeper)) == 1, STARTED_SECONDS)
        pids = _processes_running(sleeper)
        launched.process.send_signal(signal.SIGKILL)
        launched.process.wait()

        assert _wait_until(lambda: _gone(pids[0]), GONE_SECONDS), "the terminal outlived it"
    finally:
        launched.process.kill()
        launched.process.wait()
        for pid in [*pids, read_record(record_path).get("pid", 0)]:
            if pid and not _gone(pid):
                os.kill(pid, signal.SIGKILL)

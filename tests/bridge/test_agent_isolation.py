"""What a hostile agent, running as the bridge's user, cannot reach of the bridge: its
environment through /proc (the filter of ADR 0032 decides what the agent gets), and a life
after the bridge was SIGKILLed."""

from __future__ import annotations

import functools
import os
import shutil
import signal
from pathlib import Path

import pytest
from bridge.harness import agent_command, launch, run_bridge
from bridge.hostile import Step, launch_raw, read_record, request, run_raw, update
from bridge.provider_scripts import say

from support.processes import gone, running_exactly, wait_until
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


def test_an_agent_that_ignores_its_input_does_not_outlive_a_killed_bridge(
        stack: Stack, tmp_path: Path) -> None:
    script: list[Step] = [update(say("working")), {"hang": 3 * GONE_SECONDS}]
    launched, record_path = launch_raw(stack, tmp_path, script)
    pid = 0
    try:
        assert wait_until(lambda: record_path.exists()
                           and 0 in read_record(record_path)["done"], STARTED_SECONDS), (
            launched.stderr_path.read_text()[-3000:])
        pid = read_record(record_path)["pid"]
        launched.process.send_signal(signal.SIGKILL)
        launched.process.wait()

        assert wait_until(lambda: gone(pid), GONE_SECONDS), "the agent outlived the bridge"
    finally:
        launched.process.kill()
        launched.process.wait()
        if pid and not gone(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_hosted_command_and_what_it_started_do_not_outlive_a_killed_bridge(
        stack: Stack, tmp_path: Path) -> None:
    """The shell, its background job and a process that left its session with `setsid`
    (ADR 0136): PR_SET_PDEATHSIG alone would reach the shell only."""
    unique = 3 * GONE_SECONDS + os.getpid() % 1000 / 1000  # this run's own sleeps
    sleepers = [f"sleep {unique + extra:.3f}" for extra in (0.1, 0.2, 0.3)]
    line = f"{sleepers[0]} & setsid {sleepers[1]} & exec {sleepers[2]}"
    script: list[Step] = [request("terminal/create", command=line),
                          {"hang": 3 * GONE_SECONDS}]
    launched, record_path = launch_raw(stack, tmp_path, script, "--host-terminals")
    pids: list[int] = []
    try:
        assert wait_until(lambda: record_path.exists()
                           and 0 in read_record(record_path)["done"], STARTED_SECONDS), (
            launched.stderr_path.read_text()[-3000:])
        assert wait_until(lambda: all(len(running_exactly(sleeper)) == 1
                                       for sleeper in sleepers), STARTED_SECONDS)
        pids = [running_exactly(sleeper)[0] for sleeper in sleepers]
        launched.process.send_signal(signal.SIGKILL)
        launched.process.wait()

        left = [sleeper for sleeper, pid in zip(sleepers, pids, strict=True)
                if not wait_until(functools.partial(gone, pid), GONE_SECONDS)]
        assert left == [], "outlived the bridge"
    finally:
        launched.process.kill()
        launched.process.wait()
        for pid in [*pids, read_record(record_path).get("pid", 0)]:
            if pid and not gone(pid):
                os.kill(pid, signal.SIGKILL)


def _ignored(mask_line: str) -> set[str]:
    mask = int(mask_line.split()[1], 16)
    return {signal.Signals(number).name for number in signal.valid_signals()
            if mask >> (number - 1) & 1}


def test_the_agent_gets_sigpipe_and_sigxfsz_as_any_program_does(stack: Stack,
                                                               tmp_path: Path) -> None:
    """The bridge is Python, which ignores both, and an ignored signal stays ignored across
    execve: its launcher gives them back, as `subprocess` does, before it runs the agent."""
    seen = tmp_path / "sigign.txt"
    agent = agent_command(tmp_path, [{"update": say("done")}], "agent")[0]
    command = ["/bin/sh", "-c", f"grep '^SigIgn:' /proc/$$/status > {seen}; exec {agent}"]
    finished = run_bridge(stack, tmp_path, [], "--prompt", "Go.", command=command)

    assert finished.code == 0, finished.stderr
    assert _ignored(seen.read_text()) & {"SIGPIPE", "SIGXFSZ"} == set()


def test_an_agent_leaving_a_process_that_holds_its_output_does_not_hang_the_bridge(
        stack: Stack, tmp_path: Path) -> None:
    """The agent ignores SIGTERM and the end of its input, and started a process in a session
    of its own that holds the agent's stdout and stderr: the bridge SIGKILLs the agent's group,
    then goes on without waiting for that process to close them."""
    holder = f"sleep {3 * GONE_SECONDS + os.getpid() % 1000 / 1000:.3f}"
    agent = agent_command(tmp_path, [{"update": say("done")}], "agent")[0]
    command = ["/bin/sh", "-c", f"trap '' TERM; setsid {holder} & {agent}; exec {holder}"]
    launched = launch(stack, tmp_path, [], "--prompt", "Go.", command=command)
    try:
        finished = launched.finish_unhung(STARTED_SECONDS)
    finally:
        for pid in running_exactly(holder):
            os.kill(pid, signal.SIGKILL)

    assert finished.code == 0, finished.stderr
    # The pipes that process holds are closed before the event loop is: asyncio closed them
    # when it collected the transport, after the loop, with a traceback.
    assert "Exception ignored" not in finished.stderr
    assert "Traceback" not in finished.stderr

"""Stopping a child process: politely first, then harder."""

from __future__ import annotations

import signal
import subprocess
import time
from typing import Any, Final

from shellexec import child_lifetime

TERMINATE_SECONDS = 5.0
# The signals that stop a server or `up` gracefully: Ctrl-C, `kill`, and the hangup a closed
# terminal or a dropped SSH session sends (which otherwise killed `up` at once and left Envoy
# and the replicas running, holding their ports).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


# Popen's `process_group` for a child that `up` stops itself, in order: a group of its own
# (0: the child's pid names it), so that a terminal's Ctrl-C, sent to the whole foreground
# group, does not reach it. Envoy stopped at once on it, cutting every feed before the
# server could end it.
OWN_PROCESS_GROUP: Final = 0


def tied_to_us(command: list[str], sig: signal.Signals = signal.SIGTERM) -> list[str]:
    """`command` run so that the kernel sends it `sig` when this process dies: a `shellexec
    up` killed with SIGKILL (no handler runs) no longer leaves Envoy, replicas or PostgreSQL
    running and holding their ports. Start it from the main thread
    (`shellexec.child_lifetime`)."""
    return child_lifetime.ending_with_this_process_command(command, sig)


def stop(process: subprocess.Popen[Any], timeout: float = 10.0,
         first: signal.Signals = signal.SIGTERM) -> None:
    """Sends `first` (SIGINT stops a `shellexec up` as Ctrl-C does) and waits `timeout`
    seconds; then SIGTERM, which still lets the process stop what it started, and last
    SIGKILL."""
    if process.poll() is not None:
        return
    process.send_signal(first)
    try:
        process.wait(timeout=timeout)
        return
    except subprocess.TimeoutExpired:
        pass
    if first != signal.SIGTERM:
        process.terminate()
        try:
            process.wait(timeout=TERMINATE_SECONDS)
            return
        except subprocess.TimeoutExpired:
            pass
    process.kill()
    process.wait()


def stop_together(running: list[subprocess.Popen[Any]], timeout: float = 10.0,
                  first: signal.Signals = signal.SIGTERM) -> None:
    """Stops every process at once: each gets `first` now, and any still running once
    `timeout` seconds have passed (for all of them, not for each in turn) gets SIGKILL."""
    for process in running:
        if process.poll() is None:
            process.send_signal(first)
    deadline = time.monotonic() + timeout
    for process in running:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

"""Stopping a child process: politely first, then harder."""

from __future__ import annotations

import signal
import subprocess
from typing import Any

TERMINATE_SECONDS = 5.0
# The signals that stop a server or `up` gracefully: Ctrl-C, `kill`, and the hangup a closed
# terminal or a dropped SSH session sends (which otherwise killed `up` at once and left Envoy
# and the replicas running, holding their ports).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


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

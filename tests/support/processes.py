"""Watching processes a test started: which are running, whether one ended, and waiting for a
condition."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest


def gone(pid: int) -> bool:
    """Whether the process ended (a zombie nobody reaped has ended too)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def children(pid: int) -> set[int]:
    """The pids of the live processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if parent == pid and not gone(int(entry.name)):
                    found.add(int(entry.name))
    return found


def descendants(pid: int) -> set[int]:
    """The pids of the live processes below `pid`: its children, theirs, and so on."""
    below = children(pid)
    return below.union(*(descendants(child) for child in below))


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether `condition` held within `seconds`, polled every 50 ms."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def running(matches: Callable[[bytes], bool]) -> list[int]:
    """The pids of the live processes whose command line (its words NUL-separated, as
    /proc shows it) `matches`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if matches((entry / "cmdline").read_bytes()) and not gone(int(entry.name)):
                    pids.append(int(entry.name))
    return pids


def running_exactly(command_line: str) -> list[int]:
    """The pids of the live processes whose command line is exactly `command_line` (its words
    split at spaces)."""
    wanted = command_line.encode().replace(b" ", b"\0") + b"\0"
    return running(lambda found: found == wanted)


def run_as_init(script: Path, *args: str, timeout: float = 240) -> str:
    """What `script` printed, run with this Python as the first process (init) of a user
    and pid namespace of its own (`unshare`), where a process may choose the next pid
    (/proc/sys/kernel/ns_last_pid) and every process it started ends with it. Skips the
    test where namespaces are not to be had."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) here")
    wrap = [unshare, "--user", "--map-root-user", "--pid", "--fork", "--mount-proc"]
    if subprocess.run([*wrap, "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("this system refuses a user and pid namespace")
    ran = subprocess.run([*wrap, sys.executable, str(script), *args], capture_output=True,
                         text=True, timeout=timeout, check=False)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout

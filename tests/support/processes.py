"""Watching processes a test started end: whether one has, and waiting for a condition."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def gone(pid: int) -> bool:
    """Whether the process ended (a zombie nobody reaped has ended too)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether `condition` held within `seconds`, polled every 50 ms."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True

"""Request work for tests/app/test_offload.py that kills the worker process running it, as the
out-of-memory killer would. Workers are spawned, so they import this module by its name."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path


def die_in_a_worker(raw: bytes) -> bytes:
    """Kills the worker it runs in; run anywhere else (the server's own process), it says so."""
    if multiprocessing.parent_process() is not None:
        os._exit(1)
    return b"ran in the server's process"


def die_the_first_time(raw: bytes) -> bytes:
    """Kills the first worker it runs in (`raw` names a file that marks it done), then answers
    `raw` from the next."""
    marker = Path(raw.decode())
    if not marker.exists():
        marker.touch()
        os._exit(1)
    return raw


def wait_for_file(raw: bytes) -> bytes:
    """Holds its worker until the file `raw` names exists (a test's go-ahead), then answers
    `raw`: work that is still running whatever happens to the call that sent it."""
    go = Path(raw.decode())
    while not go.exists():
        time.sleep(0.01)
    return raw

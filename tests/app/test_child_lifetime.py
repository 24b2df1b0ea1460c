"""Which children are tied to this process (the kernel signals them when it dies): those
started from the main thread only, since the signal fires when the starting thread ends."""

from __future__ import annotations

import signal
import sys
import threading

import pytest

from shellexec.child_lifetime import (
    ending_with_this_process,
    ending_with_this_process_as_another_user,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def _from_another_thread(command: list[str]) -> list[list[str]]:
    found: list[list[str]] = []
    worker = threading.Thread(target=lambda: found.extend([
        ending_with_this_process("/bin/true", command, signal.SIGTERM),
        ending_with_this_process_as_another_user(command, signal.SIGINT)]))
    worker.start()
    worker.join()
    return found


def test_a_child_of_the_main_thread_is_tied_and_one_of_another_thread_is_not() -> None:
    """A PostgreSQL restarted from a pool's thread was stopped as soon as that thread ended."""
    tied = ending_with_this_process("/bin/true", ["true"], signal.SIGTERM)
    assert tied[:3] == [sys.executable, "-I", "-S"]
    assert _from_another_thread(["true"]) == [["/bin/true"], ["true"]]

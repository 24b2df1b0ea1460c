"""What the bridge's process keeps from the agent it runs, on Linux (ADR 0122).

- `close_to_inspection`: prctl(PR_SET_DUMPABLE, 0). The agent runs as the same user, and
  a dumpable parent's /proc/<pid>/environ, mem, fd/ and maps are open to the same user, so the
  agent could read the bridge's whole environment (`SHELLEXEC_TOKEN` included), defeating the
  allow-list of ADR 0032. Not dumpable, those files belong to root and ptrace is refused to
  processes without CAP_SYS_PTRACE; the bridge leaves no core dump either. An `execve` makes a
  process dumpable again, so the agent and its commands are not affected.
- `ends_with_bridge`: a `preexec_fn` that has the kernel SIGKILL a child when the bridge dies
  (PR_SET_PDEATHSIG), so an agent that ignores the end of its stdin, or a hosted terminal,
  does not outlive a bridge that was SIGKILLed and could stop nothing itself.

Elsewhere both are no-ops.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import Final

log = logging.getLogger("shellexec.bridge")

_PR_SET_PDEATHSIG: Final = 1
_PR_SET_DUMPABLE: Final = 4

Prctl = Callable[[int, int, int, int, int], int]


def _prctl() -> Prctl | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function: Prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


def close_to_inspection() -> bool:
    """Makes this process not dumpable; whether it is now (False off Linux or on failure)."""
    prctl = _prctl()
    if prctl is None:
        return False
    if prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        log.warning("cannot keep the agent out of this process's /proc files: %s",
                    os.strerror(ctypes.get_errno()))
        return False
    return True


def ends_with_bridge() -> Callable[[], None] | None:
    """A `preexec_fn` for a child that must die with this process, or None off Linux.

    It runs in the forked child: prctl is looked up here, before the fork (the dynamic
    loader's lock may be held by another thread at fork time), and the child checks that
    its parent is still this process, since the bridge may die between fork and prctl.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def in_child() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return in_child

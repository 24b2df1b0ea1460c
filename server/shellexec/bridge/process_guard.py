"""What the bridge's process keeps from the agent it runs, on Linux (ADR 0122).

- `close_to_inspection`: prctl(PR_SET_DUMPABLE, 0). The agent runs as the same user, and
  a dumpable parent's /proc/<pid>/environ, mem, fd/ and maps are open to the same user, so the
  agent could read the bridge's whole environment (`SHELLEXEC_TOKEN` included), defeating the
  allow-list of ADR 0032. Not dumpable, those files belong to root and ptrace is refused to
  processes without CAP_SYS_PTRACE; the bridge leaves no core dump either. An `execve` makes a
  process dumpable again, so the agent and its commands are not affected.
- `ending_with_bridge`: the command line that has the kernel SIGKILL a child when the bridge
  dies (PR_SET_PDEATHSIG, through `shellexec.child_lifetime`), so an agent that ignores the
  end of its stdin does not outlive a bridge that was SIGKILLed and could stop nothing
  itself. (A hosted terminal's command has a
  guard of its own, which reaches what the command forks too: `terminal_guard`, ADR 0136.)

Elsewhere both are no-ops.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
from collections.abc import Sequence
from typing import Final

from shellexec import child_lifetime

log = logging.getLogger("shellexec.bridge")

_PR_SET_DUMPABLE: Final = 4


def close_to_inspection() -> bool:
    """Makes this process not dumpable; whether it is now (False off Linux or on failure)."""
    prctl = child_lifetime.prctl()
    if prctl is None:
        return False
    if prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        log.warning("cannot keep the agent out of this process's /proc files: %s",
                    os.strerror(ctypes.get_errno()))
        return False
    return True


def ending_with_bridge(program: str, argv: Sequence[str]) -> list[str]:
    """The command line that execs `program` with `argv` (argv[0] included), SIGKILLed by
    the kernel when the bridge dies; off Linux, `program` with argv[1:]."""
    return child_lifetime.ending_with_this_process(program, argv, signal.SIGKILL)

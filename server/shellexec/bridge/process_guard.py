"""What the bridge's process keeps from the agent it runs, on Linux (ADR 0122).

- `close_to_inspection`: prctl(PR_SET_DUMPABLE, 0). The agent runs as the same user, and
  a dumpable parent's /proc/<pid>/environ, mem, fd/ and maps are open to the same user, so the
  agent could read the bridge's whole environment (`SHELLEXEC_TOKEN` included), defeating the
  allow-list of ADR 0032. Not dumpable, those files belong to root and ptrace is refused to
  processes without CAP_SYS_PTRACE; the bridge leaves no core dump either. An `execve` makes a
  process dumpable again, so the agent and its commands are not affected.
- `ending_with_bridge`: the command line that has the kernel SIGKILL a child when the bridge
  dies (PR_SET_PDEATHSIG), so an agent that ignores the end of its stdin does not outlive a
  bridge that was SIGKILLed and could stop nothing itself. (A hosted terminal's command has a
  guard of its own, which reaches what the command forks too: `terminal_guard`, ADR 0136.)

Elsewhere both are no-ops.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
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


def ending_with_bridge(program: str, argv: Sequence[str]) -> list[str]:
    """The command line that execs `program` with `argv` (argv[0] included) once the kernel
    was told to SIGKILL it when this process dies; off Linux, `program` with argv[1:].

    A small Python launcher sets the signal and then execs: PR_SET_PDEATHSIG survives
    execve. A `preexec_fn` would do it without the launcher, but then `subprocess` must fork
    instead of vfork, which runs gRPC's fork handlers, and a child forked while the service
    link is busy crashed with SIGSEGV.
    """
    if _prctl() is None:
        return [program, *argv[1:]]
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), program, *argv]


# argv: the bridge's pid, the program, its argv. The parent check closes the race of a bridge
# that died before prctl; exit 127 is a shell's "cannot run". Python starts with SIGPIPE and
# SIGXFSZ ignored, which execve would pass on: the program gets them as `subprocess` gives them.
_LAUNCHER: Final = f"""
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl({_PR_SET_PDEATHSIG}, {int(signal.SIGKILL)}, 0, 0, 0)
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
try:
    os.execv(sys.argv[2], sys.argv[3:])
except OSError as error:
    sys.stderr.write(f"cannot run {{sys.argv[3]!r}}: {{error.strerror}}\\n")
    sys.exit(127)
"""

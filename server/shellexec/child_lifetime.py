"""Children that end with this process, on Linux: the kernel signals them when it dies, even
by SIGKILL, which runs no handler that could stop them (PR_SET_PDEATHSIG).

The bridge runs its agent this way (SIGKILL, ADR 0122); `shellexec up` runs Envoy, the
replicas and a local PostgreSQL this way (their own graceful stop signal), so a killed `up`
leaves nothing holding its ports. Elsewhere commands run as they are.

The signal fires when the *thread* that started the child ends, so only a child started
from the main thread, which ends with the process, is tied: one started from another thread
(a test restarting PostgreSQL from a pool's thread) would be stopped when that thread ends,
and runs untied instead.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Final

PR_SET_PDEATHSIG: Final = 1

Prctl = Callable[[int, int, int, int, int], int]


def prctl() -> Prctl | None:
    """libc's prctl, or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function: Prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


def follow_parent(parent_pid: int, sig: signal.Signals) -> None:
    """For a child forked without the launcher (a worker process): asks the kernel for `sig`
    when the parent dies, and exits at once if `parent_pid` already has."""
    function = prctl()
    if function is not None:
        function(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(1)


def ending_with_this_process(program: str, argv: Sequence[str],
                             sig: signal.Signals = signal.SIGKILL) -> list[str]:
    """The command line that execs `program` with `argv` (argv[0] included) once the kernel
    was told to send it `sig` when this process dies; off Linux, `program` with argv[1:].

    A small Python launcher sets the signal and then execs: PR_SET_PDEATHSIG survives
    execve. A `preexec_fn` would do it without the launcher, but then `subprocess` must fork
    instead of vfork, which runs gRPC's fork handlers, and a child forked while the service
    link is busy crashed with SIGSEGV. The launcher runs after `subprocess` changed the user
    (`user=`), which would have cleared the signal.
    """
    if prctl() is None or not _on_main_thread():
        return [program, *argv[1:]]
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), str(int(sig)),
            program, *argv]


def ending_with_this_process_command(command: Sequence[str],
                                     sig: signal.Signals) -> list[str]:
    """`ending_with_this_process` for a plain command line (its program found on PATH)."""
    program = shutil.which(command[0]) or command[0]
    return ending_with_this_process(program, command, sig)


def ending_with_this_process_as_another_user(command: Sequence[str],
                                             sig: signal.Signals) -> list[str]:
    """The same for a child that `subprocess` starts as another user (`user=`): the
    launcher's Python may be one that user cannot run (under /root), so util-linux's
    `setpriv --pdeathsig` sets the signal, once the user has changed (a change of user
    clears it). It cannot check that this process is still alive, as the launcher does.
    Without `setpriv`, the command as it is."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or prctl() is None or not _on_main_thread():
        return list(command)
    return [setpriv, f"--pdeathsig={sig.name.removeprefix('SIG')}", "--", *command]


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


# argv: the parent's pid, the signal, the program, its argv. The parent check closes the race
# of a parent that died before prctl; exit 127 is a shell's "cannot run". Python starts with
# SIGPIPE and SIGXFSZ ignored, which execve would pass on: the program gets them as
# `subprocess` gives them.
_LAUNCHER: Final = f"""
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl({PR_SET_PDEATHSIG}, int(sys.argv[2]), 0, 0, 0)
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
try:
    os.execv(sys.argv[3], sys.argv[4:])
except OSError as error:
    sys.stderr.write(f"cannot run {{sys.argv[4]!r}}: {{error.strerror}}\\n")
    sys.exit(127)
"""

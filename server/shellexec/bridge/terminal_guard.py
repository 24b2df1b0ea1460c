"""The guard of one hosted terminal (ADR 0136): a small program the bridge runs as
`python -I -S terminal_guard.py BRIDGE_PID STATUS_FD SHELL -c LINE`, and the parent of the
shell that runs the agent's command line.

It is never imported: it runs in its own interpreter, with the standard library only (`-I -S`
keeps the user's site-packages and variables out of it), so it starts in a few milliseconds
and holds little while it waits. What it does:

- It dies with the bridge: the kernel sends it SIGTERM when the bridge dies, even SIGKILLed
  (PR_SET_PDEATHSIG), and SIGTERM is what the bridge sends it too.
- It adopts every orphan of the command (PR_SET_CHILD_SUBREAPER): a background job, or one
  that called `setsid` to leave the shell's session, is reparented to the guard instead of
  to init, so everything the command started stays the guard's to end.
- It runs the shell in a process group of its own, writing to the pipe the bridge reads,
  and keeps no copy of that pipe, so the bridge sees the output end when the command's
  processes close it.
- STATUS_FD is one end of a Unix socket pair; the bridge believes only what this process
  sends on it (it checks each message's SCM_CREDENTIALS, and its SCM_PIDFD where pidfds
  tell processes apart), and reads nothing more once this process exited, so a process that
  got hold of the socket cannot speak for the guard. Once SIGTERM is sure to reach the
  guard's own handling (before that, SIGTERM would end the guard before the shell ran at
  all), the guard forks the shell's process, in a process group of its own, and says
  `ready PID` with that process's pid. The process waits for the bridge's `go` on the same
  socket before it becomes the shell: the bridge holds a handle on the shell's process
  group by then, and the command cannot stop the guard before the bridge has heard it
  (`kill -STOP $PPID`). Then the guard writes the shell's return code once the shell exited
  (negative for a signal, as `subprocess` reports one), while background jobs may still run.
- On SIGTERM it SIGKILLs its children until none is left. A killed process's own children
  become the guard's, so the whole tree goes, a level at a time; and since only the guard
  reaps its children, no pid it signals can have been reused by another process.
- It exits by itself once the shell and everything the shell started have ended.

It is not dumpable (PR_SET_DUMPABLE), so once that is set another process of the user can
neither read or write its memory nor take its file descriptors (ptrace, /proc/<pid>/mem,
pidfd_getfd); a socket cannot be opened through /proc/<pid>/fd at all. A process that
attached with ptrace before the prctl stays attached, so a guard that finds itself traced
then runs nothing and exits with TRACED. It exits with UNREPORTED if it could not write the
shell's return code, so that exiting 0 means the bridge got it, and also when the shell's
process never heard `go` (a process holding a copy of the socket took it, or shut the socket
down) and so ran nothing: the code that process exits with is no command's. Off Linux (no prctl) it
adopts nothing, SIGTERM ends the shell's process group only, and the bridge cannot tell who
wrote to the socket.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
# The guard's exit codes of its own (it is not the command's return code: that goes to the
# bridge on STATUS_FD): another process traces it, so it runs nothing; it could not report.
TRACED = 3
UNREPORTED = 4
# What the bridge answers to `ready` once it holds the shell's process group.
GO = b"go\n"
# What the shell's process says on its own pipe when it did not hear `go`, before it exits.
NOTHING_RAN = b"n"
WATCHED = {signal.SIGTERM, signal.SIGCHLD}
# Python starts with these ignored, and an ignored signal stays ignored across execve: the
# shell must get them as it would from a terminal (`yes | head -1` ends by SIGPIPE).
RESTORED = (signal.SIGPIPE, signal.SIGXFSZ)
# How long a round of killing waits for a child to end before it looks for children again.
ROUND_SECONDS = 0.05


def guard_the_command(bridge_pid: int) -> None:
    """Asks the kernel for SIGTERM when the bridge dies and for the command's orphans."""
    try:
        prctl = ctypes.CDLL(None).prctl
    except AttributeError:
        return
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if os.getppid() != bridge_pid:  # the bridge died before it could have sent SIGTERM
        sys.exit(1)
    tracer = tracer_pid()
    if tracer:  # attached before the prctl: it could write in the guard's name
        os.write(2, f"terminal guard: traced by process {tracer}; not running the command\n"
                    .encode())
        sys.exit(TRACED)


def tracer_pid() -> int:
    """The pid of the process tracing this one (0: none, or no /proc to tell)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def start_shell(argv: list[str], status_fd: int) -> tuple[int, int]:
    """Forks the shell's process in a process group of its own and says `ready PID` on
    `status_fd`; the process runs `argv` once the bridge answered `go`. Its pid, and the
    pipe on which it says that it ran nothing (`ran_nothing`)."""
    # Closed by exec (not inheritable), so only the process before it became the shell can
    # write on it.
    told, telling = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(told)
        _become_the_shell(argv, status_fd, telling)
    os.close(telling)
    with contextlib.suppress(OSError):  # as the child does: the group exists from here on
        os.setpgid(pid, pid)
    try:
        write_whole(status_fd, f"ready {pid}\n".encode("ascii"))
    except OSError:  # the bridge is gone, or the socket was shut down: run nothing
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        sys.exit(UNREPORTED)
    return pid, told


def ran_nothing(told: int) -> bool:
    """Whether the shell's process, once it ended, said on `told` that it never became the
    shell (no `go`): its exit code is then no command's, and is not reported."""
    try:
        # Never waiting: only a process that reopened the pipe through /proc (root alone: the
        # guard is not dumpable) could keep it open, and the guard must not wait for it.
        os.set_blocking(told, False)
        return os.read(told, 1) == NOTHING_RAN
    except OSError:
        return False
    finally:
        os.close(told)


def _become_the_shell(argv: list[str], status_fd: int, telling: int) -> None:
    """Runs in the forked process, and never returns."""
    try:
        os.setpgid(0, 0)
        for number in RESTORED:
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        heard = b""
        while not heard.endswith(b"\n") and len(heard) < len(GO):
            try:
                read = os.read(status_fd, len(GO) - len(heard))
            except BlockingIOError:  # made non-blocking by a process holding a copy
                select.select([status_fd], [], [])
                continue
            if not read:
                break
            heard += read
        if heard != GO:  # the bridge went away, or another process took or cut off `go`
            os.write(telling, NOTHING_RAN)
            os._exit(1)
        os.execv(argv[0], argv)  # closes status_fd: it is not inheritable
    except OSError as error:
        os.write(2, f"cannot run {argv[0]!r}: {error.strerror}\n".encode())
    os._exit(127)  # a shell's "cannot run"


def let_go_of_the_output() -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


def children() -> list[int]:
    """The guard's children, adopted ones included (none off Linux)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", encoding="ascii") as listing:
            return [int(pid) for pid in listing.read().split()]
    except FileNotFoundError:  # a kernel built without CONFIG_PROC_CHILDREN
        return children_by_parent(me)
    except OSError:
        return []


def children_by_parent(parent: int) -> list[int]:
    """The processes whose parent is `parent`, from every process's stat line (slower than
    the kernel's list, and the same answer)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == parent:
                found.append(int(entry))
    return found


class Guard:
    def __init__(self, shell: int, status_fd: int, told: int) -> None:
        self.shell = shell
        self.status_fd = status_fd
        self.told = told
        self.shell_reaped = False
        self.reported = False

    def watch(self) -> None:
        """Until the shell and every process it started ended, or SIGTERM ended them."""
        while self.reap():
            if signal.sigwaitinfo(WATCHED).si_signo == signal.SIGTERM:
                self.end_everything()
                return

    def end_everything(self) -> None:
        while True:
            if not self.shell_reaped:  # its group id is still the shell's own
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.shell, signal.SIGKILL)
            for pid in children():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if not self.reap():
                return
            signal.sigtimedwait({signal.SIGCHLD}, ROUND_SECONDS)

    def reap(self) -> bool:
        """Reaps the children that ended, reporting the shell's code; whether any is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.shell:
                self.shell_reaped = True
                if ran_nothing(self.told):  # the guard exits UNREPORTED: no code is made up
                    os.close(self.status_fd)
                else:
                    self.report(os.waitstatus_to_exitcode(status))

    def report(self, returncode: int) -> None:
        with contextlib.suppress(OSError):
            write_whole(self.status_fd, f"{returncode}\n".encode("ascii"))
            self.reported = True
        os.close(self.status_fd)


def write_whole(fd: int, data: bytes) -> None:
    """Writes all of `data` on `fd`, waiting while the socket is full: a process holding a
    copy of it may have made it non-blocking (the flag is shared) and filled it, and the
    bridge reads it empty meanwhile (the shell's process reads `go` so too)."""
    left = memoryview(data)
    while left:
        try:
            left = left[os.write(fd, left):]
        except BlockingIOError:
            select.select([], [fd], [])


def main(argv: list[str]) -> None:
    bridge_pid, status_fd, command = int(argv[1]), int(argv[2]), argv[3:]
    for number in WATCHED:  # the guard waits for them, even if its parent ignored them
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    os.set_inheritable(status_fd, False)
    guard_the_command(bridge_pid)
    shell, told = start_shell(command, status_fd)
    let_go_of_the_output()
    guard = Guard(shell, status_fd, told)
    guard.watch()
    if not guard.reported:  # exiting 0 would let the bridge take 0 for the shell's code
        sys.exit(UNREPORTED)


if __name__ == "__main__":
    main(sys.argv)

"""The bridge's own sweep of a command that killed its guard (`terminals._sweep`, ADR 0136)
ends a process that hops from pid to pid: each generation forks and exits, staying in the
guard's session. A read of /proc is not atomic, so the sweep missed the live generation, took
the empty round for the end, and the hopper outlived the release and the bridge (a review's
hopper in C did, 10 times out of 10). Whether a read misses it is luck, so one test hides the
hopper from the bridge's reads of /proc, as the race does when the hopper wins it.

A hopper may first join the guard's own process group (`setpgid(0, $PPID)`: it is in the
same session), which the sweep left alone, and only the shell's group was signalled through a
pidfd: such a hopper survived even when the reads saw it. Once the guard is gone its group is
signalled too, through a pidfd of the guard.

The sweep tells the command's processes by the number of the guard's session. Once the
bridge had reaped a guard the command killed, and the sweep had emptied the session, the
number was free: another terminal's guard given it (or any process that then called
`setsid`) had its session swept as the command's. The guard is now reaped only once the
terminal is let go."""

from __future__ import annotations

import asyncio
import json
import os
import select
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shellexec.bridge import terminals
from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.terminals import TerminalHost

from support.processes import run_as_init

# Bounds of the waits below, each ended as soon as what it waits for happened: the hopper
# below ends by itself well within ENDED_SECONDS (throttled and capped, it leaves at most
# GENERATIONS zombies for init to reap).
ENDED_SECONDS = 120.0
GENERATIONS = 1000
PAUSE = 0.001

# argv: FIFO MARKER GENERATIONS PAUSE [GROUP]. Joins the process group GROUP if given, holds
# the FIFO open in every generation (its reader sees its end once the last one is gone), says
# it started, then forks and exits, a generation every few milliseconds; writes MARKER if it
# lived through them all.
_HOPPER = """
import os, sys, time
fifo, marker, generations = sys.argv[1], sys.argv[2], int(sys.argv[3])
if len(sys.argv) > 5:
    os.setpgid(0, int(sys.argv[5]))
held = os.open(fifo, os.O_WRONLY)
os.write(held, b"s")
for _ in range(generations):
    if os.fork():
        os._exit(0)
    time.sleep(float(sys.argv[4]))
with open(marker, "w") as survived:
    survived.write("survived\\n")
"""


def _until_every_writer_closed(fifo: int) -> bool:
    """Whether every process holding the FIFO's write end closed it within ENDED_SECONDS;
    what it read meanwhile is dropped."""
    poller = select.poll()
    poller.register(fifo, select.POLLIN | select.POLLHUP)
    deadline = time.monotonic() + ENDED_SECONDS
    while (left := deadline - time.monotonic()) > 0:
        if poller.poll(left * 1000):
            try:
                if os.read(fifo, 4096) == b"":
                    return True
            except BlockingIOError:
                pass
    return False


def _hiding(monkeypatch: pytest.MonkeyPatch, hopper: Path) -> None:
    """The bridge's reads of /proc never see a process running `hopper`, nor a zombie (a
    generation of the hopper seen alive may have exited by the time this looks, and a
    zombie's command line is empty)."""
    read = terminals._processes_of
    named = str(hopper).encode()

    def seen(pid: int) -> bool:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return True
        return bool(cmdline) and named not in cmdline

    def hiding(guard: int, guard_alive: bool) -> Any:
        found: Any = read(guard, guard_alive)
        if isinstance(found, list):  # the processes alone, as the sweep once read them
            return [process for process in found if seen(process.pid)]
        return type(found)([process for process in found.processes if seen(process.pid)],
                           {group: member for group, member in found.groups.items()
                            if seen(member.pid)})

    monkeypatch.setattr(terminals, "_processes_of", hiding)


@pytest.mark.parametrize("group", ["", "$PPID"], ids=["in-the-shells-group", "in-the-guards-group"])
@pytest.mark.parametrize("hidden", [True, False], ids=["missed-by-every-read", "racing"])
def test_a_pid_hopper_left_by_a_command_that_killed_its_guard_is_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hidden: bool, group: str) -> None:
    hopper, fifo_path = tmp_path / "hopper.py", tmp_path / "held"
    if hidden:
        _hiding(monkeypatch, hopper)
    started, marker = tmp_path / "started", tmp_path / "survived"
    hopper.write_text(_HOPPER)
    os.mkfifo(fifo_path)
    line = (f"{shlex.quote(sys.executable)} {hopper} {fifo_path} {marker} {GENERATIONS} {PAUSE} "
            f"{group} & "
            f"while [ ! -e {started} ]; do sleep 0.01; done; kill -KILL $PPID; sleep 300")
    fifo = os.open(fifo_path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        async def scenario() -> str | None:
            host = TerminalHost(tmp_path, dict(os.environ), 600, lambda update: None,
                                OpenCalls())
            terminal_id = await host.create(line, None, None, None, None)
            loop = asyncio.get_running_loop()
            # The hopper holds the FIFO once it wrote to it; then the command kills its guard.
            said = await loop.run_in_executor(None, _first_byte, fifo)
            started.touch()
            status = await host.wait_for_exit(terminal_id)
            await host.release(terminal_id)
            return status.signal if said == b"s" else None

        guard_end = asyncio.run(asyncio.wait_for(scenario(), ENDED_SECONDS))
        every_generation_ended = _until_every_writer_closed(fifo)
    finally:
        os.close(fifo)

    assert guard_end == "SIGKILL"
    assert every_generation_ended, "the hopper did not end by itself either"
    assert not marker.exists(), "the hopper outlived the sweep"


def _first_byte(fifo: int) -> bytes:
    poller = select.poll()
    poller.register(fifo, select.POLLIN)
    if not poller.poll(ENDED_SECONDS * 1000):
        return b""
    return os.read(fifo, 1)


# argv: DIRECTORY. As init of a pid namespace of its own: a terminal's command kills its
# guard and is swept; once nothing is left in the guard's session, a process is given the pid
# before the guard's, then the next one, before and after the terminal is released. Prints
# what happened as JSON.
_TAKING_THE_GUARDS_PID = r"""
import asyncio, json, os, sys, time
from pathlib import Path
from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.terminals import TerminalHost


def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as read:
            return read.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def pids():
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def left_in(session, guard):
    # The command's orphans are this init's: reap them (never the bridge's guard, which is
    # this process's own child too), and count who else is left in the session.
    for pid in pids():
        fields = stat(pid)
        if pid != guard and fields and fields[0] == "Z" and int(fields[1]) == os.getpid():
            os.waitpid(pid, os.WNOHANG)
    return [pid for pid in pids() if pid != guard and (stat(pid) or [0] * 4)[3] == str(session)]


def take(pid):
    with open("/proc/sys/kernel/ns_last_pid", "w") as last:
        last.write(str(pid - 1))
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    return child


async def main():
    host = TerminalHost(Path(sys.argv[1]), dict(os.environ), 600, lambda update: None,
                        OpenCalls())
    terminal = await host.create("echo $PPID; kill -KILL $PPID; exec sleep 300", None, None,
                                 None, None)
    status = await host.wait_for_exit(terminal)
    guard = int(host.output(terminal)[0].split()[0])
    deadline = time.monotonic() + 60
    while left_in(guard, guard) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    held = take(guard)
    await host.release(terminal)
    print(json.dumps({"signal": status.signal, "guard": guard, "taken_while_held": held,
                      "taken_after_release": take(guard)}))


asyncio.run(main())
"""


def test_a_dead_guard_s_pid_is_given_to_no_process_until_its_terminal_is_let_go(
        tmp_path: Path) -> None:
    script = tmp_path / "taking_the_guards_pid.py"
    script.write_text(_TAKING_THE_GUARDS_PID)
    result = json.loads(run_as_init(script, str(tmp_path)).splitlines()[-1])
    assert result["signal"] == "SIGKILL", result
    # Not even to a process that asked for it: it went to the next free pid.
    assert result["taken_while_held"] != result["guard"], result
    # Released, the guard was reaped: no zombie stays behind.
    assert result["taken_after_release"] == result["guard"], result

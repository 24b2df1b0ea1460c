"""The replica processes of `shellexec up --replicas N`, each started again when it exits.

Envoy's health checks take a dead replica out of the rotation within a second (ADR 0072); this
brings it back. A replica that keeps exiting right after it started (a wrong setting, a
database that refuses it) is started again less and less often, so a crash loop neither
spins the machine nor floods the console; one that ran for a while is started again at once
(ADR 0116).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from shellexec.app import ports, processes

# Seconds to wait before starting a replica again after its first quick exit; each further
# quick exit doubles it, up to the longest wait.
FIRST_RESTART_DELAY_SECONDS = 1.0
LONGEST_RESTART_DELAY_SECONDS = 30.0
# A replica that served this long before it exited was not crash-looping.
STABLE_AFTER_SECONDS = 60.0


def restart_delay(quick_exits: int) -> float:
    """Seconds before the next start after `quick_exits` exits in a row that each came
    sooner than STABLE_AFTER_SECONDS after their start (0: start again at once)."""
    if quick_exits <= 0:
        return 0.0
    doublings = min(quick_exits - 1, 16)  # past the longest wait anyway; no float overflow
    doubled: float = FIRST_RESTART_DELAY_SECONDS * 2.0 ** doublings
    return min(LONGEST_RESTART_DELAY_SECONDS, doubled)


def _exit_description(returncode: int) -> str:
    return f"signal {-returncode}" if returncode < 0 else f"status {returncode}"


@dataclass
class Replica:
    """One replica: its number (1-based), its gRPC target, environment and log file."""

    number: int
    target: str
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    quick_exits: int = 0
    restart_at: float | None = None

    def start(self, now: float) -> None:
        with open(self.log, "ab") as sink:  # the child keeps its own copy
            self.process = subprocess.Popen(
                processes.tied_to_us([sys.executable, "-m", "shellexec.app.cli", "serve"]),
                env=self.env, process_group=processes.OWN_PROCESS_GROUP,
                stdout=subprocess.DEVNULL, stderr=sink)
        self.started_at, self.restart_at = now, None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def supervise(self, now: float) -> str | None:
        """Starts the replica again if it exited and its wait is over; returns a line saying
        what happened, or None when nothing did."""
        if self.process is None:
            return None
        if self.restart_at is None:
            returncode = self.process.poll()
            return None if returncode is None else self._exited(now, returncode)
        if now < self.restart_at:
            return None
        try:
            self.start(now)
        except OSError as error:  # no log file, no fork under memory pressure: try later
            self.quick_exits += 1
            delay = self._wait(now)
            return (f"replica {self.number} ({self.target}) could not be started again "
                    f"({error.strerror or error}); trying again in {delay:.0f} s")
        return f"replica {self.number} ({self.target}) started again, pid {self.pid}"

    def _exited(self, now: float, returncode: int) -> str:
        ran = now - self.started_at
        self.quick_exits = self.quick_exits + 1 if ran < STABLE_AFTER_SECONDS else 0
        delay = self._wait(now)
        return (f"replica {self.number} ({self.target}) exited with "
                f"{_exit_description(returncode)} after {ran:.0f} s{self._port_taken()}; "
                f"starting it again in {delay:.0f} s (log .run/{self.log.name})")

    def _wait(self, now: float) -> float:
        delay = restart_delay(self.quick_exits)
        self.restart_at = now + delay
        return delay

    def _port_taken(self) -> str:
        """What to add when another program holds the replica's port: Envoy sends this
        replica's share of calls to that port, so the operator must hear of it."""
        host, port = ports.split_address(self.target)
        try:
            taken = ports.is_in_use(host, port)
        except OSError:  # not a port another program holds: nothing to add
            return ""
        if not taken:
            return ""
        return (f", and another program now holds its port {port}: it cannot start until "
                "that program stops")

    def stop(self) -> None:
        if self.process is not None:
            processes.stop(self.process, timeout=10)

"""A PostgreSQL server of our own, for trying replicas (`shellexec up --replicas N` without a
database URL) and for the tests: Debian's `postgresql` package, a new cluster in a temporary
folder, on a free loopback port, stopped (and removed) with us.

PostgreSQL refuses to run as root, and cannot enter root's private folders: when we are root,
the cluster's folder is made directly under the system's temporary folder and belongs to the
`postgres` user, and `initdb` and `postgres` run as that user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from shellexec import child_lifetime
from shellexec.app import ports, processes

SYSTEM_USER = "postgres"
DATABASE = "shellexec_local"
PROGRAMS = Path("/usr/lib/postgresql")


class PostgresMissingError(RuntimeError):
    """Debian's postgresql package is not installed."""

    def __init__(self) -> None:
        super().__init__("PostgreSQL is not installed: run `make postgresql` (apt-get install "
                         "postgresql), or set SHELLEXEC_DATABASE_URL to a server of yours")


def postgres_bin() -> Path:
    """The folder of the newest installed PostgreSQL's programs (not on PATH in Debian)."""
    found = sorted(PROGRAMS.glob("*/bin/postgres"), key=lambda path: int(path.parts[-3]))
    if not found:
        raise PostgresMissingError
    return found[-1].parent


def _owner() -> tuple[str | None, int | None]:
    """The user and group that run the cluster's programs: `postgres` when we are root,
    None (ourselves) otherwise."""
    if os.geteuid() != 0:
        return None, None
    return SYSTEM_USER, pwd.getpwnam(SYSTEM_USER).pw_gid


@dataclass
class LocalPostgres:
    """A PostgreSQL cluster in `folder`, serving on 127.0.0.1:`port`.

    `durable=False` turns fsync off: for tests, which kill replicas and restart the server
    cleanly, never the machine."""

    folder: Path
    port: int
    durable: bool = True
    process: subprocess.Popen[bytes] | None = None

    @classmethod
    def create(cls, durable: bool = True) -> LocalPostgres:
        """Makes a new cluster with an empty database (`DATABASE`) and starts it."""
        folder = Path(tempfile.mkdtemp(prefix="shellexec-postgres-"))
        server = cls(folder, ports.free_port("127.0.0.1"), durable)
        try:
            server._init()
            server.start()
            server.create_database(DATABASE)
        except BaseException:
            server.remove()
            raise
        return server

    def url(self, database: str = DATABASE) -> str:
        return f"postgresql://{SYSTEM_USER}@127.0.0.1:{self.port}/{database}"

    def _init(self) -> None:
        user, group = _owner()
        if user is not None:
            shutil.chown(self.folder, user, group)
        subprocess.run([postgres_bin() / "initdb", "-D", str(self.folder / "data"), "-A",
                        "trust", "-U", SYSTEM_USER, "-E", "UTF8", "--locale=C.UTF-8",
                        *(() if self.durable else ("--no-sync",))],
                       check=True, stdout=subprocess.DEVNULL, user=user, group=group,
                       extra_groups=None if user is None else [])

    def start(self) -> None:
        """Starts the server and waits until it accepts connections."""
        settings = ["listen_addresses=127.0.0.1", "max_connections=300"]
        if not self.durable:
            settings += ["fsync=off", "full_page_writes=off"]
        user, group = _owner()
        with open(self.folder / "postgres.log", "ab") as log:  # the child keeps its own copy
            # Fast shutdown (SIGINT) when `up` dies.
            self.process = subprocess.Popen(
                child_lifetime.ending_with_this_process_as_another_user(
                    [str(postgres_bin() / "postgres"), "-D", str(self.folder / "data"), "-p",
                     str(self.port), "-k", str(self.folder),
                     *(part for setting in settings for part in ("-c", setting))], signal.SIGINT),
                stdout=log, stderr=log, user=user, group=group,
                extra_groups=None if user is None else [],
                process_group=processes.OWN_PROCESS_GROUP)
        self._wait_ready()

    def stop(self) -> None:
        """Fast shutdown (SIGINT): connections end, nothing committed is lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                processes.stop(self.process)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def remove(self) -> None:
        """Stops the server and deletes its cluster."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def create_database(self, name: str, template: str | None = None) -> str:
        """Creates database `name` (a copy of `template`, if given); returns its URL."""
        statement = f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")
        # CREATE DATABASE cannot run in a transaction: autocommit.
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(statement.encode())
        return self.url(name)

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                log = (self.folder / "postgres.log").read_text()[-2000:]
                raise RuntimeError(f"postgres exited: {log}")
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=1).close()
                return
            except psycopg.OperationalError:
                time.sleep(0.05)
        raise TimeoutError(f"postgres not ready after {timeout} s")

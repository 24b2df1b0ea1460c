"""Starts the real stack for tests: `shellexec serve` and Envoy as separate processes.

They are separate so a test can SIGKILL the server and start it again on the same port and
database while Envoy stays up, as a crash would look in production.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from shellexec.app import envoy, ports, processes
from shellexec.app.settings import Settings
from shellexec.client import ShellExecClient
from shellexec.service import system_clock
from shellexec.service.tokens import Tokens
from shellexec.store import open_database, packing

from support.rest import Api

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


# Every port handed out in this test process, so that two picks (a stack's gRPC and REST
# ports, or a test's own next to its stack's) never name the same port.
_HANDED_OUT: set[int] = set()
# `make test` runs the tests in parallel worker processes (pytest-xdist, ADR 0132), which
# tell each one its number and their count. A worker keeps to the ports that leave that
# remainder, so two workers never pick the same port between one's pick and its bind.
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def free_port() -> int:
    """A loopback port that nothing uses and this process has not handed out before (and
    that no other test worker picks)."""
    while True:
        port = ports.free_ports("127.0.0.1", 1, avoid=_HANDED_OUT)[0]
        _HANDED_OUT.add(port)
        if port % _WORKERS == _WORKER:
            return port


def up_environment(database_url: str) -> dict[str, str]:
    """The settings of a `shellexec up` a test runs in its own process (`cli.main`): the
    database, free ports, and no metrics listeners."""
    return {"SHELLEXEC_DATABASE_URL": database_url,
            "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{free_port()}",
            "SHELLEXEC_REST_PORT": str(free_port()),
            "SHELLEXEC_METRICS_PORT": "0", "SHELLEXEC_ENVOY_METRICS_PORT": "0"}


def socket_folder(workdir: Path) -> Path:
    """A short private folder for the sockets of the stack in `workdir`.

    A socket's path may be at most 107 bytes, and a test's work directory (pytest's base,
    the worker's folder, the test's name) can alone come near that, so the sockets live in
    the system's temporary folder, under a name drawn from the work directory: the same for
    every start of the stack, different for every stack."""
    digest = hashlib.sha256(os.fsencode(workdir.absolute())).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"shellexec-{digest}"


@dataclass
class Stack:
    """A running server + Envoy pair on free loopback ports and a temporary database."""

    workdir: Path
    grpc_port: int = field(default_factory=free_port)
    rest_port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)
    server: subprocess.Popen[bytes] | None = None
    envoy: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{self.grpc_port}",
            "SHELLEXEC_REST_PORT": str(self.rest_port),
            "SHELLEXEC_ADMIN_SOCKET": str(self.admin_socket),
            "SHELLEXEC_DATABASE_URL": f"sqlite:///{self.workdir / 'shellexec.db'}",
            "SHELLEXEC_HEARTBEAT_SECONDS": "0.5",
            "SHELLEXEC_STREAM_LIFETIME_SECONDS": "30",
            **self.extra_env,
        }

    @property
    def admin_socket(self) -> Path:
        """Envoy's admin interface (and the servers' token-check sockets beside it), in a
        private folder of the stack's own."""
        return socket_folder(self.workdir) / "admin.sock"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def rest_url(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    def start(self) -> Stack:
        """Starts both processes; if either fails to come up, stops whatever did."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.start_server()
        self.start_envoy(self.grpc_port)

    def start_envoy(self, *grpc_ports: int) -> None:
        """Starts this stack's Envoy in front of the servers on `grpc_ports`."""
        config = self.workdir / "envoy.yaml"
        config.write_text(envoy.render(Settings.from_env(self.env), *grpc_ports))
        log_path = self.workdir / "envoy.log"
        with open(log_path, "ab") as log:  # the child keeps its own copy
            try:
                self.envoy = envoy.launch(config, self.admin_socket, log, timeout=30)
            except (RuntimeError, TimeoutError) as failure:
                raise RuntimeError(f"{failure}: {log_path.read_text()[-3000:]}") from failure

    def start_server(self) -> None:
        with open(self.workdir / "server.log", "ab") as log:
            self.server = subprocess.Popen(
                [BIN / "shellexec", "serve"], cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                stderr=log)
        self._wait_for_server()

    def kill_server(self) -> None:
        """SIGKILL: no graceful shutdown, no flush, like a crash."""
        assert self.server is not None
        self.server.send_signal(signal.SIGKILL)
        self.server.wait(timeout=10)

    def stop(self) -> None:
        """Stops both processes and removes their sockets' folder (a new start makes it
        again)."""
        for process in (self.envoy, self.server):
            if process is not None:
                processes.stop(process)
        shutil.rmtree(self.admin_socket.parent, ignore_errors=True)

    @property
    def api(self) -> Api:
        """The REST API through this stack's Envoy."""
        return Api(self.rest_url)

    def api_as(self, token: str) -> Api:
        """The REST API through this stack's Envoy, sending `token` as a bearer token."""
        return Api(self.rest_url, token=token)

    def create_token(self, name: str, *scopes: str, tasks: str = "") -> str:
        """A new token in this stack's database, made as `shellexec token create` makes it
        (in this process: tests/service/test_auth.py runs the command itself)."""
        database = open_database(self.env["SHELLEXEC_DATABASE_URL"], readers=1)
        try:
            return Tokens(database, system_clock).create(name, scopes, [tasks] if tasks else [])
        finally:
            database.close()

    @property
    def on_postgres(self) -> bool:
        return self.env["SHELLEXEC_DATABASE_URL"].startswith("postgresql://")

    def sql(self, statement: str, *params: object) -> list[tuple[object, ...]]:
        """Runs one statement on the stack's database, past the service (`?` marks each
        parameter, on either engine), commits, and returns its rows (none for a change)."""
        url = self.env["SHELLEXEC_DATABASE_URL"]
        if self.on_postgres:
            with psycopg.connect(url, autocommit=True) as server:
                cursor = server.execute(statement.replace("?", "%s"), params)
                return list(cursor.fetchall()) if cursor.description else []
        database = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            with database:
                return list(database.execute(statement, params).fetchall())
        finally:
            database.close()

    def chunk_texts(self) -> list[str]:
        """The text of every stored output chunk, in append order, inflated where the store
        packed it (ADR 0150): what the database holds, whichever way it holds it."""
        rows: Any = self.sql("SELECT data, packed, text_bytes FROM output_chunk ORDER BY id")
        return [packing.unpack(str(data), None if packed is None else bytes(packed), size)
                for data, packed, size in rows]

    def packed_chunks(self) -> int:
        """How many stored output chunks are packed."""
        return len(self.sql("SELECT id FROM output_chunk WHERE packed IS NOT NULL"))

    def client(self) -> ShellExecClient:
        return ShellExecClient(self.grpc_target)

    def _wait_for_server(self, timeout: float = 30.0) -> None:
        server = self.server
        if ports.wait_answering(self.grpc_target, timeout,
                                still_starting=lambda: server is None or server.poll() is None):
            return
        if server is not None and server.poll() is not None:
            log = (self.workdir / "server.log").read_text()[-3000:]
            raise RuntimeError(f"server exited: {log}")
        raise TimeoutError(f"server not ready after {timeout} s")


@contextmanager
def running_stack(workdir: Path, **settings: str) -> Iterator[Stack]:
    """A started stack with extra settings (`SHELLEXEC_*=value` keywords), stopped after."""
    stack = Stack(workdir, extra_env=settings).start()
    try:
        yield stack
    finally:
        stack.stop()

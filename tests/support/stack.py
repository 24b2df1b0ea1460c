"""Starts the real stack for tests: `shellexec serve` and Envoy as separate processes.

They are separate so a test can SIGKILL the server and start it again on the same port and
database while Envoy stays up, as a crash would look in production.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from shellexec.client import ShellExecClient

from support.rest import Api

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Stack:
    """A running server + Envoy pair on free loopback ports and a temporary database."""

    workdir: Path
    grpc_port: int = field(default_factory=free_port)
    rest_port: int = field(default_factory=free_port)
    admin_port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)
    server: subprocess.Popen[bytes] | None = None
    envoy: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{self.grpc_port}",
            "SHELLEXEC_REST_PORT": str(self.rest_port),
            "SHELLEXEC_ADMIN_PORT": str(self.admin_port),
            "SHELLEXEC_DATABASE_URL": f"sqlite:///{self.workdir / 'shellexec.db'}",
            "SHELLEXEC_HEARTBEAT_SECONDS": "0.5",
            "SHELLEXEC_STREAM_LIFETIME_SECONDS": "30",
            **self.extra_env,
        }

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
        config = self.workdir / "envoy.yaml"
        config.write_bytes(subprocess.run(
            [BIN / "shellexec", "envoy-config", "--grpc-port", str(self.grpc_port)],
            env=self.env, check=True, capture_output=True).stdout)
        with open(self.workdir / "envoy.log", "ab") as log:  # the child keeps its own copy
            self.envoy = subprocess.Popen(
                [BIN / "envoy", "-c", str(config), "--concurrency", "1", "--log-level", "error",
                 "--disable-hot-restart"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        self._wait(lambda: self._get(f"http://127.0.0.1:{self.admin_port}/ready") == 200,
                   "envoy")

    def start_server(self) -> None:
        with open(self.workdir / "server.log", "ab") as log:
            self.server = subprocess.Popen(
                [BIN / "shellexec", "serve"], cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                stderr=log)
        self._wait(self._server_serving, "server")

    def kill_server(self) -> None:
        """SIGKILL: no graceful shutdown, no flush, like a crash."""
        assert self.server is not None
        self.server.send_signal(signal.SIGKILL)
        self.server.wait(timeout=10)

    def stop(self) -> None:
        for process in (self.envoy, self.server):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()

    @property
    def api(self) -> Api:
        """The REST API through this stack's Envoy."""
        return Api(self.rest_url)

    def client(self) -> ShellExecClient:
        return ShellExecClient(self.grpc_target)

    def _server_serving(self) -> bool:
        if self.server is not None and self.server.poll() is not None:
            log = (self.workdir / "server.log").read_text()[-3000:]
            raise RuntimeError(f"server exited: {log}")
        with grpc.insecure_channel(self.grpc_target) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=0.2)
            except grpc.FutureTimeoutError:
                return False
        return True

    @staticmethod
    def _get(url: str) -> int:
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return int(response.status)
        except (urllib.error.URLError, ConnectionError):
            return 0

    @staticmethod
    def _wait(ready: Any, what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.05)
        raise TimeoutError(f"{what} not ready after {timeout} s")

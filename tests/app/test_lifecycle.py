"""Starting and stopping the service as `make run` does: exclusive ports with a clear message
when they are taken, readiness of the processes this command started, and a prompt, quiet
shutdown that ends open feed streams."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from shellexec.app import envoy, processes
from shellexec.app.admin_socket import AdminSocketError
from shellexec.app.ports import PortInUseError
from shellexec.app.server import start_server
from shellexec.app.settings import Settings
from shellexec.client import ShellExecClient
from shellexec.demo.rest import RestApi

from support.acp import codex_start
from support.processes import descendants, gone, wait_until
from support.stack import ROOT, Stack, free_port

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
BANNER = "shellexec is running"
# Long enough that a stop which waited for open streams instead of ending them would show.
GRACE_SECONDS = 30
STOP_TIMEOUT = 10


@dataclass
class Up:
    """A `shellexec up` process (what `make run` runs) with its output collected by a thread."""

    workdir: Path
    env: dict[str, str]
    process: subprocess.Popen[str] | None = None
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    stdout: list[str] = field(default_factory=list)

    def start(self) -> Up:
        with open(self.workdir / "up.err", "w") as stderr:  # the child keeps its own copy
            # A process group of its own, as in a terminal, where Ctrl-C signals them all.
            self.process = subprocess.Popen(
                [BIN / "shellexec", "up"], cwd=self.workdir, env=self.env, text=True,
                stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
        threading.Thread(target=self._collect, daemon=True).start()
        return self

    def _collect(self) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.lines.put(line)

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        while True:
            line = self.lines.get(timeout=timeout)
            self.stdout.append(line)
            if text in line:
                return

    def rest_of_stdout(self) -> str:
        while not self.lines.empty():
            self.stdout.append(self.lines.get())
        return "".join(self.stdout)

    @property
    def stderr(self) -> str:
        return (self.workdir / "up.err").read_text()

    def stop(self) -> None:
        """Stops it as Ctrl-C does, so it also stops its Envoy; harder if that fails."""
        if self.process is not None:
            processes.stop(self.process, STOP_TIMEOUT * 2, first=signal.SIGINT)


def up_env(workdir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{free_port()}",
        "SHELLEXEC_REST_PORT": str(free_port()),
        "SHELLEXEC_DATABASE_URL": f"sqlite:///{workdir / 'shellexec.db'}",
        **extra,
    }


@pytest.fixture
def running_up(tmp_path: Path) -> Iterator[Up]:
    service = Up(tmp_path, up_env(tmp_path, SHELLEXEC_SHUTDOWN_GRACE_SECONDS=str(GRACE_SECONDS),
                                  SHELLEXEC_HEARTBEAT_SECONDS="60"))
    service.start().wait_for(BANNER)
    yield service
    service.stop()


def envoy_pid(running_up: Up) -> int:
    assert running_up.process is not None
    [front] = [pid for pid in descendants(running_up.process.pid)
               if Path(f"/proc/{pid}/comm").read_text().strip() == "envoy"]
    return front


def run_shellexec(args: list[str], env: dict[str, str],
                  cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BIN / "shellexec", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=60, check=False)


def grpc_port(env: dict[str, str]) -> int:
    return int(env["SHELLEXEC_GRPC_ADDRESS"].rsplit(":", 1)[1])


def test_a_second_make_run_says_shellexec_is_running_and_prints_no_banner(
        running_up: Up, tmp_path: Path) -> None:
    second_dir = tmp_path / "second"
    second_dir.mkdir()
    second = run_shellexec(["up"], running_up.env, second_dir)
    assert second.returncode != 0
    port = grpc_port(running_up.env)
    assert f"shellexec: another shellexec is already running on port {port}" in second.stderr
    assert BANNER not in second.stdout
    assert "cannot bind" not in second.stderr  # no raw Envoy error
    # The first service is untouched and still answers through its own front door.
    front_door = RestApi(f"http://127.0.0.1:{running_up.env['SHELLEXEC_REST_PORT']}")
    assert front_door.create_session("still-mine")["task_id"] == "still-mine"


def test_serve_refuses_a_port_another_shellexec_serves(stack: Stack, tmp_path: Path) -> None:
    env = {**stack.env, "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'other.db'}"}
    second = run_shellexec(["serve"], env, tmp_path)
    assert second.returncode == 1
    running = f"shellexec: another shellexec is already running on port {stack.grpc_port}"
    assert running in second.stderr
    assert "Traceback" not in second.stderr


def test_serve_names_a_port_another_program_holds(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {**os.environ, "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{port}",
               "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
        result = run_shellexec(["serve"], env, tmp_path)
    assert result.returncode == 1
    assert f"port {port} (gRPC)" in result.stderr
    assert "SHELLEXEC_GRPC_ADDRESS" in result.stderr


def test_an_address_this_machine_does_not_have_is_named_as_such(tmp_path: Path) -> None:
    """192.0.2.1 (a documentation address) cannot be bound: that was reported as a port
    another program holds."""
    env = {**os.environ, "SHELLEXEC_AUTH": "on", "SHELLEXEC_GRPC_ADDRESS": "192.0.2.1:50051",
           "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    result = run_shellexec(["serve"], env, tmp_path)
    assert result.returncode == 1
    assert "cannot listen on 192.0.2.1:50051 (gRPC): " in result.stderr
    assert "already in use" not in result.stderr
    assert "Traceback" not in result.stderr


def test_the_server_binds_its_port_exclusively(stack: Stack, tmp_path: Path) -> None:
    """Past the start-up check (a race), binding itself fails instead of sharing the port."""
    settings = Settings(grpc_address=stack.grpc_target,
                        database_url=f"sqlite:///{tmp_path / 'race.db'}")
    with pytest.raises(PortInUseError, match=str(stack.grpc_port)):
        asyncio.run(start_server(settings))


def test_a_second_envoy_cannot_share_the_rest_port(stack: Stack, tmp_path: Path) -> None:
    config = tmp_path / "second-envoy.yaml"
    env = {**stack.env, "SHELLEXEC_ADMIN_SOCKET": str(tmp_path / "second-admin.sock")}
    config.write_text(run_shellexec(["envoy-config", "--grpc-port", str(stack.grpc_port)],
                                    env, ROOT).stdout)
    second = subprocess.run(envoy.envoy_command(config), capture_output=True, text=True,
                            timeout=60, check=False)
    assert second.returncode != 0
    assert str(stack.rest_port) in second.stderr


def test_readiness_ignores_another_envoy_on_the_admin_socket(stack: Stack) -> None:
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(envoy.EnvoyStartError, match="not ready on admin socket"):
            envoy.wait_ready(stack.admin_socket, stand_in, envoy.new_node_id(), timeout=1.0)
    finally:
        stand_in.kill()
        stand_in.wait()


def test_a_second_up_in_the_same_folder_is_refused_before_it_takes_the_admin_socket(
        stack: Stack, tmp_path: Path) -> None:
    """Two `up` in one folder share `.run/envoy/admin.sock`: the second took it, and the
    first one's statistics and admin interface became the second's."""
    with pytest.raises(AdminSocketError, match="an Envoy already answers on"):
        envoy.launch(tmp_path / "unused.yaml", stack.admin_socket, timeout=1.0)
    # `up` says so before it starts a server or writes its `.run/envoy.yaml`.
    env = {**os.environ, "SHELLEXEC_ADMIN_SOCKET": str(stack.admin_socket),
           "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{free_port()}",
           "SHELLEXEC_REST_PORT": str(free_port()),
           "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'second.db'}"}
    result = run_shellexec(["up"], env, tmp_path)
    assert result.returncode == 1
    assert "an Envoy already answers on" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / ".run" / "envoy.yaml").exists()
    # A cluster said so only once its database and replicas had started (a database no one
    # listens for shows that it does not get that far).
    nowhere = f"postgresql://nobody@127.0.0.1:{free_port()}/none"
    cluster = run_shellexec(["up", "--replicas", "2", "--database", nowhere], env, tmp_path)
    assert cluster.returncode == 1
    assert "an Envoy already answers on" in cluster.stderr
    assert "Traceback" not in cluster.stderr
    assert not (tmp_path / ".run").exists()


def read_sse(api: RestApi, session_id: str, events: list[dict[str, Any]],
             opened: threading.Event) -> None:
    for event in api.watch(session_id):
        events.append(event)
        opened.set()


def read_grpc(client: ShellExecClient, session_id: str, events: list[Any],
              opened: threading.Event) -> None:
    for event in client.watch(session_id, timeout=STOP_TIMEOUT * 3):
        events.append(event)
        opened.set()


def test_ctrl_c_ends_open_streams_at_once_and_prints_no_traceback(running_up: Up) -> None:
    env = running_up.env
    front_door = RestApi(f"http://127.0.0.1:{env['SHELLEXEC_REST_PORT']}",
                         timeout=STOP_TIMEOUT * 3)
    session_id = front_door.create_session("stop")["id"]
    sse_events: list[dict[str, Any]] = []
    grpc_events: list[Any] = []
    sse_open, grpc_open = threading.Event(), threading.Event()
    with ShellExecClient(env["SHELLEXEC_GRPC_ADDRESS"]) as client:
        readers = [
            threading.Thread(target=read_sse, args=(front_door, session_id, sse_events,
                                                    sse_open)),
            threading.Thread(target=read_grpc, args=(client, session_id, grpc_events,
                                                     grpc_open)),
        ]
        for reader in readers:
            reader.start()
        assert sse_open.wait(STOP_TIMEOUT)
        assert grpc_open.wait(STOP_TIMEOUT)

        assert running_up.process is not None
        running_up.process.send_signal(signal.SIGINT)
        # Well inside the 30 s grace: only streams that were ended actively allow this.
        assert running_up.process.wait(timeout=STOP_TIMEOUT) == 0
        for reader in readers:
            reader.join(timeout=STOP_TIMEOUT)
    assert sse_events[-1]["type"] == "end_of_stream"
    assert grpc_events[-1].type == "end_of_stream"
    assert "shellexec stopped" in running_up.rest_of_stdout()
    assert "Traceback" not in running_up.stderr
    assert "CancelledError" not in running_up.stderr
    # Envoy leaves its admin socket behind; a stale socket outlived every stop.
    assert list((running_up.workdir / ".run" / "envoy").iterdir()) == []


def test_the_server_and_front_door_lines_stay_whole_on_one_stderr(running_up: Up) -> None:
    """Both logs go to `up`'s stderr. Envoy wrote its own there in pieces that could end
    inside a line, and a server line written in between broke both (about one in a thousand
    under load); Envoy's lines now come through `line_relay`, a whole line per write."""
    front = envoy_pid(running_up)
    # Not the file `up` writes to: a pipe `up` reads.
    assert os.readlink(f"/proc/{front}/fd/2").startswith("pipe:")
    assert os.readlink(f"/proc/{front}/fd/1").startswith("pipe:")
    env = running_up.env
    front_door = RestApi(f"http://127.0.0.1:{env['SHELLEXEC_REST_PORT']}",
                         timeout=STOP_TIMEOUT * 3)
    paths = [f"/api/v1/task-sessions/ses_{index:026d}" for index in range(400)]

    def ask(share: list[str]) -> None:
        for path in share:
            assert front_door.request("GET", path).status == 404

    askers = [threading.Thread(target=ask, args=(paths[start::8],)) for start in range(8)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join(timeout=STOP_TIMEOUT * 6)
    running_up.stop()
    logged = [json.loads(line) for line in running_up.stderr.splitlines()
              if '"request_id"' in line]
    front_door_paths = {line.get("path") for line in logged if "http_status" in line}
    assert front_door_paths >= set(paths)
    assert sum(line.get("method", "").endswith("/GetSession") for line in logged) >= len(paths)


def test_an_envoy_that_dies_stops_up_saying_so(running_up: Up) -> None:
    os.kill(envoy_pid(running_up), signal.SIGKILL)
    assert running_up.process is not None
    assert running_up.process.wait(timeout=STOP_TIMEOUT) == 1
    assert "shellexec: Envoy exited with status -9" in running_up.stderr
    assert "shellexec stopped" in running_up.rest_of_stdout()


def test_ctrl_c_in_a_terminal_ends_every_open_feed_with_end_of_stream(running_up: Up) -> None:
    """A terminal's Ctrl-C reaches Envoy too: it stopped at once, before the server had sent
    its feeds their `end_of_stream`, so each browser's feed was cut, and the server logged
    the writes it could no longer make as INTERNAL."""
    env = running_up.env
    front_door = RestApi(f"http://127.0.0.1:{env['SHELLEXEC_REST_PORT']}",
                         timeout=STOP_TIMEOUT * 3)
    session_id = front_door.create_session("group-stop")["id"]
    feeds: list[list[dict[str, Any]]] = [[], [], []]
    opened = [threading.Event() for _ in feeds]
    readers = [threading.Thread(target=read_sse, args=(front_door, session_id, events, event))
               for events, event in zip(feeds, opened, strict=True)]
    for reader in readers:
        reader.start()
    assert all(event.wait(STOP_TIMEOUT) for event in opened)
    assert running_up.process is not None
    os.killpg(running_up.process.pid, signal.SIGINT)
    assert running_up.process.wait(timeout=STOP_TIMEOUT) == 0
    for reader in readers:
        reader.join(timeout=STOP_TIMEOUT)
    assert [events[-1]["type"] for events in feeds] == ["end_of_stream"] * 3
    assert '"INTERNAL"' not in running_up.stderr


def _signal_the_group_after_a_large_request(running_up: Up, sig: signal.Signals) -> None:
    """Starts a conversion worker with a large request, sends `sig` to the whole process group
    as a terminal does, and checks that `up` and every process it started end cleanly."""
    env = running_up.env
    with ShellExecClient(env["SHELLEXEC_GRPC_ADDRESS"]) as client:
        record = client.normalize([codex_start("big", "echo " + "x" * 40_000)])
    assert record.shell_exec.command.startswith("echo x")
    assert running_up.process is not None
    started = descendants(running_up.process.pid)  # the server, its worker, Envoy
    assert len(started) >= 3, started
    os.killpg(running_up.process.pid, sig)
    assert running_up.process.wait(timeout=STOP_TIMEOUT) == 0
    assert wait_until(lambda: all(gone(pid) for pid in started), STOP_TIMEOUT)
    assert "shellexec stopped" in running_up.rest_of_stdout()
    assert "Traceback" not in running_up.stderr, running_up.stderr[-3000:]


def test_ctrl_c_in_a_terminal_after_a_large_request_prints_no_traceback(
        running_up: Up) -> None:
    """A terminal's Ctrl-C signals every process of the group, the conversion worker that a
    large request started too (api/offload.py): the worker leaves stopping to the server."""
    _signal_the_group_after_a_large_request(running_up, signal.SIGINT)
    assert "KeyboardInterrupt" not in running_up.stderr


def test_a_closed_terminal_stops_everything_up_started(running_up: Up) -> None:
    """A closed terminal (or a dropped SSH session) sends SIGHUP to the whole group: `up` died
    at once, and Envoy and the server ran on, holding their ports, so the next `up` failed."""
    _signal_the_group_after_a_large_request(running_up, signal.SIGHUP)


def test_a_killed_up_takes_envoy_and_its_workers_with_it(running_up: Up) -> None:
    """SIGKILL runs no handler: Envoy ran on, holding the REST port, so the next `up` failed.
    The kernel now stops it when `up` dies (processes.tied_to_us)."""
    env = running_up.env
    with ShellExecClient(env["SHELLEXEC_GRPC_ADDRESS"]) as client:
        client.normalize([codex_start("big", "echo " + "x" * 40_000)])  # starts a worker
    assert running_up.process is not None
    started = descendants(running_up.process.pid)  # Envoy and the conversion worker
    assert len(started) >= 2, started
    running_up.process.kill()
    running_up.process.wait(timeout=STOP_TIMEOUT)
    try:
        assert wait_until(lambda: all(gone(pid) for pid in started), STOP_TIMEOUT)
    finally:  # what was left running, had the test failed
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    with socket.socket() as probe:  # the REST port is free again
        probe.bind(("127.0.0.1", int(env["SHELLEXEC_REST_PORT"])))


def test_serve_ends_open_streams_on_sigterm(tmp_path: Path) -> None:
    stack = Stack(tmp_path, extra_env={"SHELLEXEC_SHUTDOWN_GRACE_SECONDS": str(GRACE_SECONDS),
                                       "SHELLEXEC_HEARTBEAT_SECONDS": "60"})
    stack.start_server()
    try:
        events: list[Any] = []
        opened = threading.Event()
        with stack.client() as client:
            session = client.create_session("serve-stop")
            reader = threading.Thread(target=read_grpc,
                                      args=(client, session.id, events, opened))
            reader.start()
            assert opened.wait(STOP_TIMEOUT)
            assert stack.server is not None
            stack.server.send_signal(signal.SIGTERM)
            assert stack.server.wait(timeout=STOP_TIMEOUT) == 0
            reader.join(timeout=STOP_TIMEOUT)
        assert [(e.type, e.revision) for e in events] == [("heartbeat", 0),
                                                         ("end_of_stream", 0)]
        assert "Traceback" not in (tmp_path / "server.log").read_text()
    finally:
        stack.stop()


def test_up_with_metrics_ports_names_both_urls_and_serves_them(tmp_path: Path) -> None:
    metrics_port, stats_port = free_port(), free_port()
    service = Up(tmp_path, up_env(tmp_path, SHELLEXEC_METRICS_PORT=str(metrics_port),
                                  SHELLEXEC_ENVOY_METRICS_PORT=str(stats_port)))
    try:
        service.start().wait_for(BANNER)
        service.wait_for("Try:")
        banner = service.rest_of_stdout()
        metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        stats_url = f"http://127.0.0.1:{stats_port}/stats/prometheus"
        assert metrics_url in banner
        assert stats_url in banner
        with urllib.request.urlopen(metrics_url, timeout=10) as answer:
            assert b"shellexec_requests_total" in answer.read()
        with urllib.request.urlopen(stats_url, timeout=10) as answer:
            assert b"envoy_server_live" in answer.read()
    finally:
        service.stop()
    assert service.process is not None
    assert service.process.returncode == 0
    assert "Traceback" not in service.stderr


def test_serve_names_a_metrics_port_another_program_holds(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {**os.environ, "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{free_port()}",
               "SHELLEXEC_METRICS_PORT": str(port),
               "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
        result = run_shellexec(["serve"], env, tmp_path)
    assert result.returncode == 1
    assert f"port {port} (metrics)" in result.stderr
    assert "SHELLEXEC_METRICS_PORT" in result.stderr

"""`shellexec up --replicas N` (what `make run-cluster` runs): N replicas and one Envoy that
balances across them, on a local PostgreSQL when no URL is given, all stopped by Ctrl-C."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from shellexec.app import processes
from shellexec.demo.rest import RestApi, RestError

from support.processes import descendants, gone, wait_until
from support.rest import Api
from support.stack import BIN, free_port

BANNER = "shellexec is running with 2 replicas"
HELLO = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}}


def cluster_env(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key != "SHELLEXEC_DATABASE_URL"}
    return {**env, "SHELLEXEC_REST_PORT": str(free_port()),
            "SHELLEXEC_ADMIN_SOCKET": str(tmp_path / "admin" / "admin.sock")}


def wait_for_output(path: Path, text: str, process: subprocess.Popen[bytes],
              timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = path.read_text()
        if text in found:
            return found
        assert process.poll() is None, found + (path.parent / "up.err").read_text()
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not printed: {path.read_text()}")


@pytest.mark.slow
@pytest.mark.postgresql  # `up --replicas` starts a local one
def test_two_replicas_on_a_local_postgres_share_one_front_door(tmp_path: Path) -> None:
    env = cluster_env(tmp_path)
    with open(tmp_path / "up.out", "wb") as out, open(tmp_path / "up.err", "wb") as err:
        # A process group of its own, as in a terminal, where Ctrl-C signals them all.
        up = subprocess.Popen([BIN / "shellexec", "up", "--replicas", "2"], cwd=tmp_path,
                              env=env, stdout=out, stderr=err, start_new_session=True)
    try:
        printed = wait_for_output(tmp_path / "up.out", BANNER, up)
        folder = re.search(r"local PostgreSQL in (\S+)", printed)
        assert folder is not None
        assert Path(folder[1]).is_dir()
        api = Api(f"http://127.0.0.1:{env['SHELLEXEC_REST_PORT']}")
        sessions = [api.new_session()["id"] for _ in range(6)]
        for session_id in sessions:
            api.publish(session_id, HELLO, sequence=1)
        assert all(api.messages(session_id)[0]["content"] == "hello" for session_id in sessions)
        logs = [(tmp_path / ".run" / f"replica-{index}.log").read_text() for index in (1, 2)]
        assert all("CreateSession" in log for log in logs)  # round robin: both served
        _health_checks_carry_the_run_s_probe_secret(tmp_path, printed)
        _killed_replica_comes_back(tmp_path, printed, api, up)
        _stopped_postgres_comes_back(Path(folder[1]), api, up, tmp_path)
        feed = _open_feed(env, sessions[0])
        os.killpg(up.pid, signal.SIGINT)  # Ctrl-C
        up.wait(timeout=30)
    finally:
        processes.stop(up, 30, first=signal.SIGINT)
    assert up.returncode == 0, (tmp_path / "up.err").read_text()
    # The replicas stop before Envoy, which still relays their last event: Envoy stopped
    # first, and the feed was cut without it. Neither hears the terminal's Ctrl-C itself:
    # each stopped at once on it.
    feed.join(timeout=30)
    assert feed.events[-1]["type"] == "end_of_stream", feed.events
    assert "shellexec stopped" in (tmp_path / "up.out").read_text()
    assert list((tmp_path / "admin").iterdir()) == []  # no socket outlives the stop
    assert not Path(folder[1]).exists()  # the local PostgreSQL went with it


class _Feed(threading.Thread):
    """A session's live feed through the front door, read until it ends."""

    def __init__(self, api: RestApi, session_id: str) -> None:
        super().__init__(daemon=True)
        self.api, self.session_id = api, session_id
        self.events: list[dict[str, Any]] = []
        self.opened = threading.Event()

    def run(self) -> None:
        # A cut feed: its events, without end_of_stream, say so.
        with contextlib.suppress(OSError, http.client.HTTPException, RestError):
            for event in self.api.watch(self.session_id):
                self.events.append(event)
                self.opened.set()


def _open_feed(env: dict[str, str], session_id: str) -> _Feed:
    feed = _Feed(RestApi(f"http://127.0.0.1:{env['SHELLEXEC_REST_PORT']}", timeout=60),
                 session_id)
    feed.start()
    assert feed.opened.wait(30)
    return feed


def _health_checks_carry_the_run_s_probe_secret(tmp_path: Path, printed: str) -> None:
    """Envoy's health checks carry a secret made for this run, which the replicas know, and
    its configuration is this user's alone (ADR 0140)."""
    config = tmp_path / ".run" / "envoy.yaml"
    assert config.stat().st_mode & 0o777 == 0o600
    secret = re.search(r'"x-shellexec-probe", "value": "([A-Za-z0-9_-]{32,})"',
                       config.read_text())
    assert secret is not None
    pid = re.search(r"replica 1 .*\(pid (\d+),", printed)
    assert pid is not None, printed
    environment = Path(f"/proc/{pid[1]}/environ").read_bytes().split(b"\0")
    assert f"SHELLEXEC_PROBE_SECRET={secret[1]}".encode() in environment


def _killed_replica_comes_back(tmp_path: Path, printed: str, api: Api,
                               up: subprocess.Popen[bytes]) -> None:
    """SIGKILL replica 1: `up` says so, starts it again, and it serves through Envoy again."""
    pid = re.search(r"replica 1 .*\(pid (\d+),", printed)
    assert pid is not None, printed
    log = tmp_path / ".run" / "replica-1.log"
    os.kill(int(pid[1]), signal.SIGKILL)
    again = wait_for_output(tmp_path / "up.out", "replica 1 (", up)
    assert "exited with signal 9" in again
    restarted = wait_for_output(tmp_path / "up.out", "started again, pid", up)
    assert re.search(r"replica 1 \(\S+\) started again, pid (\d+)", restarted)
    logged = log.stat().st_size
    deadline = time.monotonic() + 90
    # Envoy sends it API calls again (health checks are logged too: not those).
    while "ShellExecService/" not in log.read_text()[logged:]:
        assert time.monotonic() < deadline, "the restarted replica was given no call"
        api.publish(api.new_session()["id"], HELLO, sequence=1)


def _stopped_postgres_comes_back(folder: Path, api: Api, up: subprocess.Popen[bytes],
                                 tmp_path: Path) -> None:
    """The local PostgreSQL stopped (as `pg_ctl stop` does, fast): `up` says so and starts it
    again, and the replicas store again. It died without a word before, and the replicas
    answered UNAVAILABLE until Ctrl-C (an operator's probe)."""
    postmaster = int((folder / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(postmaster, signal.SIGINT)
    wait_for_output(tmp_path / "up.out", "the local PostgreSQL exited", up)
    wait_for_output(tmp_path / "up.out", "started again\n", up)
    deadline = time.monotonic() + 90
    while True:  # each replica connects again on its next call
        try:
            api.publish(api.new_session()["id"], HELLO, sequence=1)
            break
        except RestError:
            assert time.monotonic() < deadline, "the replicas did not store again"
            time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.postgresql  # `up --replicas` starts a local one
def test_a_killed_cluster_takes_its_replicas_envoy_and_postgresql_with_it(
        tmp_path: Path) -> None:
    """SIGKILL runs no handler: the replicas, Envoy and PostgreSQL ran on, holding their
    ports. The kernel now stops each when `up` dies (processes.tied_to_us)."""
    env = cluster_env(tmp_path)
    with open(tmp_path / "up.out", "wb") as out, open(tmp_path / "up.err", "wb") as err:
        up = subprocess.Popen([BIN / "shellexec", "up", "--replicas", "2"], cwd=tmp_path,
                              env=env, stdout=out, stderr=err)
    started: set[int] = set()
    try:
        wait_for_output(tmp_path / "up.out", BANNER, up)
        started = descendants(up.pid)  # two replicas, Envoy, PostgreSQL and its workers
        assert len(started) >= 4, started
        up.kill()
        up.wait(timeout=30)
        assert wait_until(lambda: all(gone(pid) for pid in started), 30)
    finally:  # what was left running, had the test failed
        processes.stop(up, 30, first=signal.SIGINT)
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_several_replicas_refuse_a_sqlite_database(tmp_path: Path) -> None:
    done = subprocess.run([BIN / "shellexec", "up", "--replicas", "2", "--database",
                           f"sqlite:///{tmp_path / 'x.db'}"], cwd=tmp_path,
                          env=cluster_env(tmp_path), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 1
    assert "--database must be a postgresql:// URL" in done.stderr

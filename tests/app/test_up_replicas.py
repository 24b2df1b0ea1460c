"""`shellexec up --replicas N` (what `make run-cluster` runs): N replicas and one Envoy that
balances across them, on a local PostgreSQL when no URL is given, all stopped by Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from shellexec.app import processes

from support.rest import Api
from support.stack import BIN, free_port

BANNER = "shellexec is running with 2 replicas"
HELLO = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}}


def _env(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key != "SHELLEXEC_DATABASE_URL"}
    return {**env, "SHELLEXEC_REST_PORT": str(free_port()),
            "SHELLEXEC_ADMIN_SOCKET": str(tmp_path / "admin" / "admin.sock")}


def _wait_for(path: Path, text: str, process: subprocess.Popen[bytes],
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
def test_two_replicas_on_a_local_postgres_share_one_front_door(tmp_path: Path) -> None:
    env = _env(tmp_path)
    with open(tmp_path / "up.out", "wb") as out, open(tmp_path / "up.err", "wb") as err:
        up = subprocess.Popen([BIN / "shellexec", "up", "--replicas", "2"], cwd=tmp_path,
                              env=env, stdout=out, stderr=err)
    try:
        printed = _wait_for(tmp_path / "up.out", BANNER, up)
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
        _killed_replica_comes_back(tmp_path, printed, api, up)
    finally:
        processes.stop(up, 30, first=signal.SIGINT)
    assert up.returncode == 0, (tmp_path / "up.err").read_text()
    assert "shellexec stopped" in (tmp_path / "up.out").read_text()
    assert not Path(folder[1]).exists()  # the local PostgreSQL went with it


def _killed_replica_comes_back(tmp_path: Path, printed: str, api: Api,
                               up: subprocess.Popen[bytes]) -> None:
    """SIGKILL replica 1: `up` says so, starts it again, and it serves through Envoy again."""
    pid = re.search(r"replica 1 .*\(pid (\d+),", printed)
    assert pid is not None, printed
    log = tmp_path / ".run" / "replica-1.log"
    os.kill(int(pid[1]), signal.SIGKILL)
    again = _wait_for(tmp_path / "up.out", "replica 1 (", up)
    assert "exited with signal 9" in again
    restarted = _wait_for(tmp_path / "up.out", "started again, pid", up)
    assert re.search(r"replica 1 \(\S+\) started again, pid (\d+)", restarted)
    logged = log.stat().st_size
    deadline = time.monotonic() + 90
    # Envoy sends it API calls again (health checks are logged too: not those).
    while "ShellExecService/" not in log.read_text()[logged:]:
        assert time.monotonic() < deadline, "the restarted replica was given no call"
        api.publish(api.new_session()["id"], HELLO, sequence=1)


def test_several_replicas_refuse_a_sqlite_database(tmp_path: Path) -> None:
    done = subprocess.run([BIN / "shellexec", "up", "--replicas", "2", "--database",
                           f"sqlite:///{tmp_path / 'x.db'}"], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "--database must be a postgresql:// URL" in done.stderr

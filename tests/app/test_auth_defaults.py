"""The defaults of authentication: `make run` on loopback needs no token and says so in its
banner; a non-loopback listener without authentication refuses to start, saying why."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from shellexec.app import processes
from shellexec.app.exposure import is_loopback

from support.stack import BIN, free_port

BANNER_END = "Try:"


def up_env(workdir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "SHELLEXEC_GRPC_ADDRESS": f"127.0.0.1:{free_port()}",
        "SHELLEXEC_REST_PORT": str(free_port()),
        "SHELLEXEC_ADMIN_PORT": str(free_port()),
        "SHELLEXEC_DATABASE_URL": f"sqlite:///{workdir / 'shellexec.db'}",
        **extra,
    }


def run_shellexec(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BIN / "shellexec", command], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=60, check=False)


def banner_of_make_run(workdir: Path, **settings: str) -> str:
    """What `shellexec up` prints up to the end of its banner; then stops it as Ctrl-C does."""
    process = subprocess.Popen([BIN / "shellexec", "up"], cwd=workdir,
                               env=up_env(workdir, **settings), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith(BANNER_END):
                break
    finally:
        processes.stop(process, 20, first=signal.SIGINT)
        if process.stdout is not None:
            process.stdout.close()
    return "".join(lines)


@pytest.mark.slow
def test_make_run_on_loopback_says_authentication_is_off(tmp_path: Path) -> None:
    banner = banner_of_make_run(tmp_path)
    assert "shellexec is running" in banner
    assert "  authentication off (loopback only)\n" in banner


@pytest.mark.slow
def test_make_run_with_authentication_on_says_tokens_are_needed(tmp_path: Path) -> None:
    banner = banner_of_make_run(tmp_path, SHELLEXEC_AUTH="on")
    assert "shellexec is running" in banner
    assert "authentication on (bearer tokens" in banner
    assert "authentication off" not in banner


@pytest.mark.parametrize(("command", "setting"), [
    ("serve", {"SHELLEXEC_GRPC_ADDRESS": "0.0.0.0:0"}),
    ("up", {"SHELLEXEC_GRPC_ADDRESS": "[::]:0"}),
    ("up", {"SHELLEXEC_REST_HOST": "0.0.0.0"}),
])
def test_a_non_loopback_address_without_authentication_refuses_to_start(
        tmp_path: Path, command: str, setting: dict[str, str]) -> None:
    env = {**up_env(tmp_path), **setting}
    refused = run_shellexec(command, env, tmp_path)
    assert refused.returncode == 1
    assert "refusing to listen on a non-loopback address" in refused.stderr
    assert "SHELLEXEC_AUTH=on" in refused.stderr
    assert "shellexec is running" not in refused.stdout
    assert not (tmp_path / "shellexec.db").exists()  # refused before anything opened


def test_an_unknown_auth_setting_is_refused_by_name(tmp_path: Path) -> None:
    env = {**up_env(tmp_path), "SHELLEXEC_AUTH": "maybe"}
    refused = run_shellexec("serve", env, tmp_path)
    assert refused.returncode == 2
    assert "SHELLEXEC_AUTH must be `on` or `off`" in refused.stderr


def test_loopback_names_are_loopback() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost",
                                    "[::ffff:127.0.0.1]"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.0.0.5", "example.com", "",
                                        "::ffff:10.0.0.5", "[::ffff:0.0.0.0]"]))

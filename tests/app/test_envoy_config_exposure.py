"""`shellexec envoy-config` keeps the loopback-only rule of authentication (ADR 0052) as `serve`
and `up` do: a front door on every address with authentication off is refused, not printed
(run with `shellexec serve` on loopback, it would be an open service on the network)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support.stack import BIN, free_port


def test_envoy_config_refuses_an_open_front_door_without_authentication(
        tmp_path: Path) -> None:
    env = {**os.environ, "SHELLEXEC_REST_HOST": "0.0.0.0", "SHELLEXEC_AUTH": "off",
           "SHELLEXEC_REST_PORT": str(free_port()),
           "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'shellexec.db'}"}
    rendered = subprocess.run([BIN / "shellexec", "envoy-config", "--grpc-port",
                               str(free_port())], cwd=tmp_path, env=env, text=True,
                              capture_output=True, timeout=60, check=False)
    assert "address: 0.0.0.0" not in rendered.stdout
    assert rendered.returncode != 0
    assert "SHELLEXEC_AUTH=on" in rendered.stderr


@pytest.mark.parametrize("port", ["0", "-5", "99999", "50O51"])
def test_envoy_config_refuses_a_grpc_port_that_is_none(tmp_path: Path, port: str) -> None:
    """It printed a configuration with that port and exited 0."""
    env = {**os.environ, "SHELLEXEC_REST_PORT": str(free_port()),
           "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'shellexec.db'}"}
    rendered = subprocess.run([BIN / "shellexec", "envoy-config", f"--grpc-port={port}"],
                              cwd=tmp_path, env=env, text=True, capture_output=True,
                              timeout=60, check=False)
    assert rendered.returncode == 2
    assert rendered.stdout == ""
    assert "--grpc-port: must be a port from 1 to 65535" in rendered.stderr


def test_envoy_config_needs_a_port_when_the_address_has_none(tmp_path: Path) -> None:
    env = {**os.environ, "SHELLEXEC_REST_PORT": str(free_port()),
           "SHELLEXEC_GRPC_ADDRESS": "127.0.0.1:0",
           "SHELLEXEC_DATABASE_URL": f"sqlite:///{tmp_path / 'shellexec.db'}"}
    rendered = subprocess.run([BIN / "shellexec", "envoy-config"], cwd=tmp_path, env=env,
                              text=True, capture_output=True, timeout=60, check=False)
    assert rendered.returncode == 2
    assert rendered.stdout == ""
    assert "port 0 (any free port), so pass --grpc-port" in rendered.stderr

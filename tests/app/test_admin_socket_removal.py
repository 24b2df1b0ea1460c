"""What `envoy.stop` leaves at the admin socket's path: Envoy leaves its socket behind, and
only a socket nothing accepts connections on is removed."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from shellexec.app import envoy


def _exited() -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process


def _socket_at(path: Path) -> socket.socket:
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound.bind(str(path))
    return bound


def test_a_socket_left_behind_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "admin.sock"
    _socket_at(path).close()  # the file stays, as Envoy's does
    envoy.stop(_exited(), path)
    assert not path.exists()


def test_a_socket_another_process_listens_on_stays(tmp_path: Path) -> None:
    """Another Envoy still starting answers no LIVE `/server_info`: its socket was taken for
    stale and removed, and that Envoy never became ready."""
    path = tmp_path / "admin.sock"
    with _socket_at(path) as listening:
        listening.listen()
        envoy.stop(_exited(), path)
        assert path.exists()


def test_a_file_that_is_no_socket_stays(tmp_path: Path) -> None:
    path = tmp_path / "admin.sock"
    path.write_text("a mistyped setting's file")
    envoy.stop(_exited(), path)
    assert path.read_text() == "a mistyped setting's file"

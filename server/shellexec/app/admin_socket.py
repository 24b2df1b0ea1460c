"""Envoy's admin interface on a Unix socket in a private folder, and reading it.

A TCP admin port on loopback is reachable by any web page the user visits (a cross-origin
form POST to `/quitquitquit` stops Envoy); a Unix socket is not, and the folder's permissions
keep other local users out. The standard library speaks HTTP over TCP only, so
`UnixHTTPConnection` connects `http.client` to the socket instead. See ADR 0056.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

# sun_path holds 108 bytes on Linux, the terminating NUL included.
MAX_SOCKET_PATH_BYTES = 107
SOCKET_MODE = 0o600
FOLDER_MODE = 0o700


class AdminSocketError(RuntimeError):
    """The admin socket's folder is not private, or its path cannot be a socket's."""


class UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTP/1.1 connection to a server listening on the Unix socket at `path`."""

    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self._path))
        except OSError:
            sock.close()
            raise
        self.sock = sock


def prepare(path: Path) -> Path:
    """Makes the socket's folder (owner only) or checks that an existing one is private;
    raises AdminSocketError naming the setting otherwise. Returns `path`."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise AdminSocketError(
            f"admin socket path {str(path)[:80]}... is longer than {MAX_SOCKET_PATH_BYTES} "
            "bytes: choose a shorter SHELLEXEC_ADMIN_SOCKET")
    folder = path.parent
    try:
        if not folder.exists():
            folder.mkdir(mode=FOLDER_MODE, parents=True)
            folder.chmod(FOLDER_MODE)  # mkdir's mode is reduced by the umask, never widened
        info = folder.stat()
    except OSError as error:
        raise AdminSocketError(f"the admin socket's folder {folder} cannot be made: "
                               f"{error.strerror or error}; choose another "
                               "SHELLEXEC_ADMIN_SOCKET") from None
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise AdminSocketError(
            f"the admin socket's folder {folder} must belong to this user and be private "
            "(chmod 700): choose another SHELLEXEC_ADMIN_SOCKET")
    return path


def answers(path: Path, timeout: float = 1.0) -> bool:
    """Whether anything accepts a connection on the socket at `path` (an Envoy live or not)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError:
        return False
    finally:
        sock.close()
    return True


def remove(path: Path) -> None:
    """Removes the socket file at `path`; anything else there (a file an operator named by
    mistake) is left alone."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(path.lstat().st_mode):
            path.unlink()


def get_json(path: Path, url_path: str, timeout: float = 1.0) -> Any:
    """The JSON answer to GET `url_path` on the admin socket; None when nothing answers, the
    answer is not a 200 or not JSON."""
    connection = UnixHTTPConnection(path, timeout)
    try:
        connection.request("GET", url_path)
        response = connection.getresponse()
        if response.status != 200:
            return None
        return json.loads(response.read())
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()

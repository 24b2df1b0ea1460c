"""The service the demo talks to: the one already answering on the REST port, or a
`shellexec up` the demo starts (and later stops) itself."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from shellexec.app import processes
from shellexec.app.settings import Settings
from shellexec.demo.rest import probe

# A boot-state answer for an unknown task: the API is there (401: it requires a token).
API_UP = (200, 401, 404)
LOG = Path(".run") / "demo-service.log"


class ServiceError(RuntimeError):
    """The service could not be found or started."""


def front_door_url(settings: Settings) -> str:
    host = settings.rest_host
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = "127.0.0.1"
    return f"http://{host}:{settings.rest_port}"


@dataclass
class Service:
    """`process` is set when the demo started the service itself."""

    url: str
    process: subprocess.Popen[bytes] | None = None

    @property
    def started_here(self) -> bool:
        return self.process is not None

    def running(self) -> bool:
        return self.process is None or self.process.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        """Stops a service the demo started, the way Ctrl-C would (SIGINT), then harder."""
        if self.process is not None:
            processes.stop(self.process, timeout, first=signal.SIGINT)


def ensure(settings: Settings, timeout: float = 60.0) -> Service:
    """The service at the configured REST port, starting `shellexec up` when nothing answers."""
    url = front_door_url(settings)
    status = probe(url)
    if status in API_UP:
        return Service(url)
    if status is not None:
        raise ServiceError(
            f"{url} answers HTTP {status} instead of the shellexec API: is the gRPC server "
            "down behind a running Envoy, or is another program on that port? "
            "Set SHELLEXEC_REST_PORT to use another port.")
    return _start(url, timeout)


def _start(url: str, timeout: float) -> Service:
    LOG.parent.mkdir(exist_ok=True)
    command = [str(Path(sys.executable).parent / "shellexec"), "up"]
    with LOG.open("ab") as log:
        # A session of its own: Ctrl-C reaches only the demo, which then stops it cleanly.
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    service = Service(url, process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServiceError(f"`shellexec up` exited with status {process.returncode}:\n"
                               f"{_tail(LOG)}")
        if probe(url, timeout=1.0) in API_UP:
            return service
        time.sleep(0.2)
    service.stop()
    raise ServiceError(f"`shellexec up` did not answer on {url} within {timeout:.0f} s:\n"
                       f"{_tail(LOG)}")


def _tail(path: Path, size: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return "(no log)"

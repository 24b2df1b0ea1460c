"""Everything one bridge run is told, parsed and checked (by `cli.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from shellexec.bridge.forwarder import BufferLimits
from shellexec.bridge.permissions import PermissionAnswer
from shellexec.bridge.retry import RetryPolicy

DEFAULT_SERVER = "127.0.0.1:50051"
DEFAULT_WEB_URL = "http://127.0.0.1:8080"
DEFAULT_CANCEL_GRACE_SECONDS = 5.0
DEFAULT_RETRY_SECONDS = 60.0
DEFAULT_TERMINAL_TIMEOUT_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class BridgeOptions:
    """One run: which agent, which prompt, where to record it, and the policies."""

    command: tuple[str, ...]
    prompt: str
    server: str = DEFAULT_SERVER
    # A bearer token with the `ingest` scope, when the service has authentication on.
    token: str = ""
    # Plaintext (False), TLS checked against the system's certificates (True), or against
    # these PEM certificates (--tls-ca's, read once).
    tls: bool | bytes = False
    task_id: str = ""
    cwd: Path = Path()
    agent: str = ""
    web_url: str = DEFAULT_WEB_URL
    permission: PermissionAnswer = "allow_once"
    allow_fs_read: bool = False
    allow_fs_write: bool = False
    env_names: tuple[str, ...] = ()
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    limits: BufferLimits = field(default_factory=BufferLimits)
    cancel_grace: float = DEFAULT_CANCEL_GRACE_SECONDS
    # Host the agent's terminals (`terminal/*`) and how long one command may run.
    host_terminals: bool = False
    terminal_timeout: float = DEFAULT_TERMINAL_TIMEOUT_SECONDS

    def session_url(self, session_id: str) -> str:
        """The chat page of a service session."""
        return f"{self.web_url.rstrip('/')}/?session={session_id}"

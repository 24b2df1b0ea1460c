"""The bridge's errors; each one knows how `shellexec bridge` exits because of it.

    BridgeError                     base class; `exit_code` is the process exit status
    ├── UsageError                  bad arguments, unreadable prompt file, or a
    │                               session, token or TLS certificate the first
    │                               calls show no retry can fix                    (exit 2)
    ├── AgentError                  the agent did not start, failed the ACP handshake
    │                               or the prompt, or exited early                 (exit 1)
    ├── ServiceError                the service could not record the session       (exit 3)
    │   ├── ServiceUnavailableError unreachable for longer than the retry window
    │   ├── ServiceRejectedError    a definite, non-retryable refusal (e.g. NOT_FOUND)
    │   ├── BufferFullError         too many updates waited for the service
    │   └── ForwardingError         publishing stopped on an error nothing else handled
    └── SignalError                 SIGINT/SIGTERM/SIGHUP while the bridge waited  (130/143/129)
"""

from __future__ import annotations

from shellexec.client import ErrorDetails

EXIT_AGENT = 1
EXIT_USAGE = 2
EXIT_SERVICE = 3

# Said with every "service unreachable": the usual cause is that nothing was started yet.
START_HINT = ("is the service running? Start it with `make run` in the shellexec checkout "
              "(or `shellexec up`), or point --server at it")


class BridgeError(Exception):
    """Base class of every error the bridge reports to its user."""

    exit_code = EXIT_AGENT


class UsageError(BridgeError):
    """The command line cannot be acted on."""

    exit_code = EXIT_USAGE


class AgentError(BridgeError):
    """The agent failed: `stage` is what the bridge was doing (`start`, `initialize`...)."""

    exit_code = EXIT_AGENT

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"agent failed during {stage}: {reason}")
        self.stage = stage
        self.reason = reason


class ServiceError(BridgeError):
    """The service could not record what the agent did."""

    exit_code = EXIT_SERVICE


class ServiceUnavailableError(ServiceError):
    """`operation` kept failing with retryable errors for `window` seconds."""

    def __init__(self, operation: str, window: float, last_error: str,
                 hint: str = START_HINT) -> None:
        super().__init__(f"service unreachable for {window:g} s (--retry-for) while trying to "
                         f"{operation} (last error: {last_error}); {hint}")
        self.operation = operation
        self.window = window
        self.last_error = last_error


class ServiceRejectedError(ServiceError):
    """The service answered `operation` with a definite refusal (`code`); `reason` and
    `field_violations` are what its error details say (docs/api.md, "Errors")."""

    def __init__(self, operation: str, code: str, details: str,
                 found: ErrorDetails) -> None:
        super().__init__(f"service refused to {operation}: {code}: {details}")
        self.operation = operation
        self.code = code
        self.details = details
        self.reason = found.reason
        self.field_violations = found.field_violations


# The CreateSession fields the bridge fills from its options, keyed by the field an
# INVALID_ARGUMENT error's BadRequest details name.
_OPTION_OF_FIELD = {"task_id": "--task-id", "agent": "--agent"}


def refused_options(refusal: ServiceRejectedError) -> UsageError:
    """The usage error for a session the service refused to create: its arguments come from
    the command line, so retrying cannot help and the user must change an option."""
    for field, description in refusal.field_violations:
        option = _OPTION_OF_FIELD.get(field)
        if option is not None:
            return UsageError(f"the service refused {option}: {description}")
    return UsageError(f"the service refused the session: {refusal.details}")


# Refusals of one PublishUpdate that concern only the update published (docs/bridge.md,
# "Updates the service refuses"): INVALID_ARGUMENT, the update is malformed or too large;
# FAILED_PRECONDITION, the session holds too many updates of terminals no call names yet.
# Every other definite answer concerns the whole run: the session is gone (NOT_FOUND), the
# token no longer covers it (UNAUTHENTICATED, PERMISSION_DENIED), another writer numbers the
# session (ALREADY_EXISTS), or an answer the bridge does not know.
UPDATE_REFUSALS = frozenset({"INVALID_ARGUMENT", "FAILED_PRECONDITION"})


def refuses_only_the_update(refusal: ServiceRejectedError) -> bool:
    """Whether the bridge skips the refused update and goes on with the next one."""
    return refusal.code in UPDATE_REFUSALS


# The option that sets each limit of the update buffer, named where it is exceeded.
_BUFFER_OPTIONS = {"updates": ", --max-buffered-updates", "bytes": ", --max-buffered-bytes"}


class BufferFullError(ServiceError):
    """More than `limit` updates or bytes (`what`) waited for the service; `pending` updates
    were waiting then, and `dropped` counts the updates that found it full."""

    def __init__(self, what: str, limit: int, pending: int) -> None:
        super().__init__(what, limit, pending)
        self.what = what
        self.limit = limit
        self.pending = pending
        self.dropped = 0

    def __str__(self) -> str:
        # Composed when printed: updates keep arriving (and are dropped) until the agent
        # has been cancelled.
        option = _BUFFER_OPTIONS.get(self.what, "")
        return (f"update buffer full ({self.what} limit {self.limit}{option}) while the service "
                f"lagged behind; {self.pending} update(s) waiting were never published and "
                f"{self.dropped} later one(s) were dropped; the agent was cancelled")


# How much of an unexpected error's text the bridge's final message quotes.
_QUOTED_CHARS = 300


class ForwardingError(ServiceError):
    """Publishing update #`sequence` ended on an error the bridge has no answer for."""

    def __init__(self, sequence: int, error: BaseException) -> None:
        said = str(error)[:_QUOTED_CHARS]
        super().__init__(f"publishing update #{sequence} failed unexpectedly "
                         f"({type(error).__name__}: {said}); it and later updates were not "
                         "published")
        self.sequence = sequence


class SignalError(BridgeError):
    """A signal arrived while the bridge waited for something it can give up on."""

    def __init__(self, signal_name: str, exit_code: int, waiting_for: str) -> None:
        super().__init__(f"{signal_name}: stopped waiting for {waiting_for}")
        self.signal_name = signal_name
        self.exit_code = exit_code
        self.waiting_for = waiting_for

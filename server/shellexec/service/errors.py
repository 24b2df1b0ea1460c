"""Errors the use cases raise. Only `api` maps them to gRPC status codes and error details.

    ServiceError
    ├── InvalidArgumentError       a request field is malformed (carries the field's name)
    ├── NotFoundError              a session, turn, task or message does not exist here
    ├── FailedPreconditionError    the request is valid but the resource's state forbids it
    ├── AlreadyExistsError         what the request would create exists with other content
    ├── PermissionDeniedError      the caller's token does not cover the request
    ├── ResourceExhaustedError     the caller holds as much of a bounded resource as it may
    └── UnavailableError           the database did not answer: retry (nothing half-done)

An error's text may reach a browser and travels as a gRPC trailer, so it never holds more of an
input than `quoted` shows (ADR 0042). An error a caller is expected to act on also carries a
`reason`, a stable word of `shellexec.vocabulary` (ADR 0060); callers read it, not the text.
"""

from __future__ import annotations

from shellexec.rules.limits import MAX_QUOTED_INPUT_CHARS
from shellexec.vocabulary import ErrorReason, ResourceType


def shortened(text: str) -> str:
    """`text` cut to its first MAX_QUOTED_INPUT_CHARS characters, then "…" when longer."""
    if len(text) > MAX_QUOTED_INPUT_CHARS:
        return text[:MAX_QUOTED_INPUT_CHARS] + "…"
    return text


def quoted(text: str) -> str:
    """`text` quoted for an error message: at most its first MAX_QUOTED_INPUT_CHARS
    characters, then "…" when it was longer."""
    return repr(shortened(text))


class ServiceError(Exception):
    """Base class of every use-case error; `reason` names a condition callers act on."""

    def __init__(self, message: str, reason: ErrorReason | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class InvalidArgumentError(ServiceError):
    """A request field is malformed."""

    def __init__(self, field: str, description: str,
                 reason: ErrorReason | None = None) -> None:
        super().__init__(f"{field}: {description}", reason)
        self.field = field
        self.description = description


class NotFoundError(ServiceError):
    """The named resource does not exist (or is not visible through this path)."""

    def __init__(self, resource: str, identifier: str, resource_type: ResourceType) -> None:
        super().__init__(f"{resource} {quoted(identifier)} not found")
        self.resource = resource
        self.identifier = identifier
        self.resource_type = resource_type


class FailedPreconditionError(ServiceError):
    """The resource's current state forbids the request."""


class AlreadyExistsError(ServiceError):
    """What the request would create already exists, with other content."""


class PermissionDeniedError(ServiceError):
    """The caller may not do this; raised only where the answer reveals nothing that the
    request does not already say (a session of another task answers as not found). Its
    reason says why (TASK_NOT_COVERED: the token's task patterns)."""


class ResourceExhaustedError(ServiceError):
    """The caller already holds as much of a resource bounded per caller as it may (open feed
    watchers, ADR 0135); it may ask again once it has let some go. Other callers are not
    affected."""


class UnavailableError(ServiceError):
    """Something the server needs cannot serve the request now: the database (a PostgreSQL
    server restarting), or its conversion workers (they died twice on the request). The
    request did nothing, or nothing a retry with the same sequence or request id would
    repeat."""

"""Errors the use cases raise. Only `api` maps them to gRPC status codes.

    ServiceError
    ├── InvalidArgumentError       a request field is malformed (carries the field's name)
    ├── NotFoundError              a session, turn, task or message does not exist here
    ├── FailedPreconditionError    the request is valid but the resource's state forbids it
    └── PermissionDeniedError      the caller's token does not cover the request

An error's text may reach a browser and travels as a gRPC trailer, so it never holds more of an
input than `quoted` shows (ADR 0042).
"""

from __future__ import annotations

from shellexec.rules.limits import MAX_QUOTED_INPUT_CHARS


def quoted(text: str) -> str:
    """`text` quoted for an error message: at most its first MAX_QUOTED_INPUT_CHARS
    characters, then "…" when it was longer."""
    if len(text) > MAX_QUOTED_INPUT_CHARS:
        text = text[:MAX_QUOTED_INPUT_CHARS] + "…"
    return repr(text)


class ServiceError(Exception):
    """Base class of every use-case error."""


class InvalidArgumentError(ServiceError):
    """A request field is malformed."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class NotFoundError(ServiceError):
    """The named resource does not exist (or is not visible through this path)."""

    def __init__(self, resource: str, identifier: str) -> None:
        super().__init__(f"{resource} {quoted(identifier)} not found")
        self.resource = resource
        self.identifier = identifier


class FailedPreconditionError(ServiceError):
    """The resource's current state forbids the request."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PermissionDeniedError(ServiceError):
    """The caller may not do this; raised only where the answer reveals nothing that the
    request does not already say (a session of another task answers as not found)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

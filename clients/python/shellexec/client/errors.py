"""What a failed call's google.rpc details say, read from its `grpc.RpcError`.

    try:
        client.start_turn(session.id)
    except grpc.RpcError as error:
        if error_reason(error) == "TURN_ALREADY_RUNNING":
            ...

The service sends the details as the `grpc-status-details-bin` trailer (a serialized
`google.rpc.Status`): an `ErrorInfo` whose `reason` names a condition callers act on, a
`BadRequest` naming the field of an invalid argument, a `ResourceInfo` for what was not found.
docs/api.md ("Errors") lists every reason. Read these, not the message text, which may change.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.protobuf import message
from google.rpc import error_details_pb2, status_pb2

_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True, slots=True)
class ErrorDetails:
    """The details of one error; empty strings and tuples where the error has none."""

    reason: str = ""
    """The `ErrorInfo` reason, e.g. `TURN_ALREADY_RUNNING`."""
    domain: str = ""
    field_violations: tuple[tuple[str, str], ...] = ()
    """(field, description) of each `BadRequest` violation."""
    resource_type: str = ""
    """The `ResourceInfo` of a NOT_FOUND error, e.g. `shellexec.v1.Session`."""
    resource_name: str = ""


def _status(error: grpc.RpcError) -> status_pb2.Status | None:
    trailing = getattr(error, "trailing_metadata", None)
    for key, value in (trailing() if callable(trailing) else None) or ():
        if key == _DETAILS_KEY and isinstance(value, bytes):
            try:
                return status_pb2.Status.FromString(value)
            except message.DecodeError:
                return None
    return None


def error_details(error: grpc.RpcError) -> ErrorDetails:
    """The google.rpc details `error` carries (all empty for an error without any)."""
    status = _status(error)
    if status is None:
        return ErrorDetails()
    info = error_details_pb2.ErrorInfo()
    bad_request = error_details_pb2.BadRequest()
    resource = error_details_pb2.ResourceInfo()
    for detail in status.details:
        for target in (info, bad_request, resource):
            if detail.Is(target.DESCRIPTOR):
                detail.Unpack(target)
    return ErrorDetails(
        info.reason, info.domain,
        tuple((v.field, v.description) for v in bad_request.field_violations),
        resource.resource_type, resource.resource_name)


def error_reason(error: grpc.RpcError) -> str:
    """The `ErrorInfo` reason of `error`, or "" when it has none."""
    return error_details(error).reason

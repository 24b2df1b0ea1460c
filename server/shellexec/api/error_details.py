"""A use-case error as the gRPC status it is answered with: code, bounded message and the
google.rpc details that say what went wrong in a form callers read (ADR 0060).

- `InvalidArgumentError` carries a `BadRequest` with one field violation (field, description);
- `NotFoundError` a `ResourceInfo` (the resource's type and its id, shortened as in messages);
- an error with a `reason` an `ErrorInfo` (the reason, domain `shellexec`).

The details travel as the `grpc-status-details-bin` trailer, a serialized `google.rpc.Status`
whose code and message are the call's own; Envoy's transcoder renders it as the REST body.
The refusals of a token that the API answers before any use case runs (the interceptor's in
`auth`, the front door's token check's) are built here too (`refusal_status`), with the same
`ErrorInfo`.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2, message
from google.rpc import error_details_pb2, status_pb2

from shellexec.rules.limits import MAX_ERROR_MESSAGE_CHARS
from shellexec.service import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    ServiceError,
    UnavailableError,
)
from shellexec.service.errors import shortened
from shellexec.vocabulary import ERROR_DOMAIN, ErrorReason

STATUS_DETAILS_KEY = "grpc-status-details-bin"


def status_of(error: ServiceError) -> grpc.StatusCode:
    if isinstance(error, InvalidArgumentError):
        return grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(error, NotFoundError):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(error, FailedPreconditionError):
        return grpc.StatusCode.FAILED_PRECONDITION
    if isinstance(error, AlreadyExistsError):
        return grpc.StatusCode.ALREADY_EXISTS
    if isinstance(error, PermissionDeniedError):
        return grpc.StatusCode.PERMISSION_DENIED
    if isinstance(error, ResourceExhaustedError):
        return grpc.StatusCode.RESOURCE_EXHAUSTED  # 429 through Envoy's transcoder
    if isinstance(error, UnavailableError):
        return grpc.StatusCode.UNAVAILABLE
    return grpc.StatusCode.INTERNAL


def bounded(text: str) -> str:
    """An error message as it may be sent: at most MAX_ERROR_MESSAGE_CHARS characters."""
    if len(text) <= MAX_ERROR_MESSAGE_CHARS:
        return text
    return text[:MAX_ERROR_MESSAGE_CHARS - 1] + "…"


def error_info(reason: ErrorReason) -> error_details_pb2.ErrorInfo:
    """The `ErrorInfo` of `reason`: domain `shellexec`, no metadata (docs/api.md)."""
    return error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN)


def _details(error: ServiceError) -> list[message.Message]:
    details: list[message.Message] = []
    if error.reason is not None:
        details.append(error_info(error.reason))
    if isinstance(error, InvalidArgumentError):
        details.append(error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(
                field=error.field, description=bounded(error.description))]))
    if isinstance(error, NotFoundError):
        details.append(error_details_pb2.ResourceInfo(
            resource_type=error.resource_type, resource_name=shortened(error.identifier),
            description=bounded(str(error))))
    return details


def _packed(detail: message.Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(detail)
    return packed


def _serialized_status(code: grpc.StatusCode, text: str,
                       details: list[message.Message]) -> bytes:
    status = status_pb2.Status(code=code.value[0], message=text,
                               details=[_packed(d) for d in details])
    serialized: bytes = status.SerializeToString()
    return serialized


def rpc_status(error: ServiceError) -> tuple[grpc.StatusCode, str, bytes]:
    """(code, message, serialized google.rpc.Status) of the answer to `error`."""
    code = status_of(error)
    text = bounded(str(error))
    return code, text, _serialized_status(code, text, _details(error))


def refusal_status(code: grpc.StatusCode, text: str, reason: ErrorReason) -> bytes:
    """The serialized google.rpc.Status of a refusal the API answers itself, before any use
    case runs (a token's, ADR 0050): `code`, the message `text` (sent as it is: the caller
    bounds it) and the `ErrorInfo` of `reason`."""
    return _serialized_status(code, text, [error_info(reason)])

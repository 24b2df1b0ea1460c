"""The CPU-heavy part of a request, from its bytes: parse, validate, convert (and for
Normalize, fold and build the response).

These are pure functions of the bytes, so `offload.Offload` can run them in a worker process
(ADR 0045). An error crosses the process boundary as a `Refused` value, not an exception.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import DecodeError

from shellexec import normalize
from shellexec.api import convert, validation
from shellexec.service import InvalidArgumentError
from shellexec.service.stateless import normalize_updates
from shellexec.v1 import shell_exec_service_pb2 as pb


@dataclass(frozen=True, slots=True)
class Refused:
    """The request fails validation: INVALID_ARGUMENT naming `field`."""

    field: str
    reason: str


_NOT_A_MESSAGE = "is not a valid protobuf encoding of the request message"


def normalize_response(raw: bytes) -> bytes | Refused:
    """A NormalizeShellExecRequest's bytes -> its response's bytes."""
    try:
        args = validation.normalize(pb.NormalizeShellExecRequest.FromString(raw))
    except DecodeError:
        return Refused("request", _NOT_A_MESSAGE)
    except InvalidArgumentError as error:
        return Refused(error.field, error.reason)
    view = normalize_updates(args.updates, args.agent)
    response = convert.normalized(view, normalize.summarize(view.output))
    return bytes(response.SerializeToString())


def publish_args(raw: bytes) -> validation.PublishArgs | Refused:
    """A PublishUpdateRequest's bytes -> the valid values a publish needs."""
    try:
        return validation.publish_update(pb.PublishUpdateRequest.FromString(raw))
    except DecodeError:
        return Refused("request", _NOT_A_MESSAGE)
    except InvalidArgumentError as error:
        return Refused(error.field, error.reason)

"""The CPU-heavy part of a request, from its bytes: parse, validate, convert (and for
Normalize, fold and build the response).

These are pure functions of the bytes, so `offload.Offload` can run them in a worker process
(ADR 0045). An error crosses the process boundary as a `Refused` or `Missing` value, not an
exception.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import DecodeError

from shellexec import normalize
from shellexec.api import convert, validation, wire
from shellexec.projection import Masking
from shellexec.service import InvalidArgumentError, NotFoundError
from shellexec.service.stateless import normalize_updates
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.vocabulary import ResourceType


@dataclass(frozen=True, slots=True)
class Refused:
    """The request fails validation: INVALID_ARGUMENT naming `field`."""

    field: str
    reason: str


@dataclass(frozen=True, slots=True)
class Missing:
    """The request names an id that cannot exist: NOT_FOUND, as for an unknown one."""

    resource: str
    identifier: str
    resource_type: ResourceType


def _undecodable(message_class: type[pb.NormalizeShellExecRequest | pb.PublishUpdateRequest],
                 raw: bytes) -> Refused:
    """The field to blame for bytes that are not a `message_class` (see `wire`)."""
    culprit = wire.culprit(message_class, raw)
    return Refused(culprit.field, culprit.reason)


def normalize_response(raw: bytes) -> bytes | Refused | Missing:
    """A NormalizeShellExecRequest's bytes -> its response's bytes."""
    try:
        args = validation.normalize(pb.NormalizeShellExecRequest.FromString(raw))
    except DecodeError:
        return _undecodable(pb.NormalizeShellExecRequest, raw)
    except InvalidArgumentError as error:
        return Refused(error.field, error.description)
    except NotFoundError as error:
        return Missing(error.resource, error.identifier, error.resource_type)
    # Masked only when asked: a caller may store what it gets back (ADR 0058).
    record = normalize_updates(args.updates, args.agent, Masking(enabled=args.mask_secrets))
    response = convert.normalized(record, normalize.summarize(record.output))
    return bytes(response.SerializeToString())


def publish_args(raw: bytes) -> validation.PublishArgs | Refused | Missing:
    """A PublishUpdateRequest's bytes -> the valid values a publish needs."""
    try:
        return validation.publish_update(pb.PublishUpdateRequest.FromString(raw))
    except DecodeError:
        return _undecodable(pb.PublishUpdateRequest, raw)
    except InvalidArgumentError as error:
        return Refused(error.field, error.description)
    except NotFoundError as error:
        return Missing(error.resource, error.identifier, error.resource_type)

"""JSON values <-> google.protobuf.Value, shared by both clients."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format, struct_pb2

from shellexec.v1 import shell_exec_service_pb2 as pb

# The gRPC message limit of docs/api.md ("Limits"). The client installs without the server, so
# it cannot read shellexec.rules.limits; tests/docs/test_limits_table.py holds the two equal.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
)


def to_protobuf_value(value: Any) -> struct_pb2.Value:
    """The JSON value `value` (dicts, lists, strings, numbers, booleans, None) as the
    google.protobuf.Value the service takes an update as.

    `publish` converts a plain value with this on every call (and every retry); convert once
    and pass the result to `publish` to pay for it once. Raises ValueError, naming the cause,
    when `value` has no such form: a type JSON lacks, a number beyond a double, a lone
    surrogate in a string, or nesting deeper than protobuf's recursion limit (100 levels).
    """
    message = struct_pb2.Value()
    try:
        json_format.Parse(json.dumps(value), message)
    except (json_format.ParseError, TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"cannot encode as a google.protobuf.Value: {error}") from error
    return message


def publish_request(session_id: str, update: Any, sequence: int | None
                    ) -> pb.PublishUpdateRequest:
    value = (update if isinstance(update, struct_pb2.Value)
             else to_protobuf_value(update))
    request = pb.PublishUpdateRequest(session_id=session_id, update=value)
    if sequence is not None:
        request.sequence = sequence
    return request


def watch_request(session_id: str, since_revision: int | None) -> pb.WatchMessagesRequest:
    request = pb.WatchMessagesRequest(session_id=session_id)
    if since_revision is not None:
        request.since_revision = since_revision
    return request

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


def to_value(value: Any) -> struct_pb2.Value:
    message = struct_pb2.Value()
    json_format.Parse(json.dumps(value), message)
    return message


def publish_request(session_id: str, update: Any, sequence: int | None
                    ) -> pb.PublishUpdateRequest:
    request = pb.PublishUpdateRequest(session_id=session_id, update=to_value(update))
    if sequence is not None:
        request.sequence = sequence
    return request


def watch_request(session_id: str, since_revision: int | None) -> pb.WatchMessagesRequest:
    request = pb.WatchMessagesRequest(session_id=session_id)
    if since_revision is not None:
        request.since_revision = since_revision
    return request

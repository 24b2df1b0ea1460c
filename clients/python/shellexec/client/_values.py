"""JSON values <-> google.protobuf.Value, shared by both clients."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any, TypeVar

from google.protobuf import message as protobuf_message
from google.protobuf import struct_pb2

from shellexec.v1 import shell_exec_service_pb2 as pb

# The gRPC message limit of docs/api.md ("Limits"). The client installs without the server, so
# it cannot read shellexec.rules.limits; tests/docs/test_limits_table.py holds the two equal.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
# How deep objects and arrays may nest (the whole value is level 1; a number or a string may
# sit in the deepest): the service refuses an update nested deeper (docs/api.md, "Limits";
# tests/docs/test_limits_table.py holds the two equal). Protobuf itself stops past 100 nested
# messages, and an object level is three (a Value, its Struct, and the map entry holding the
# next Value): 35 levels of objects made a Value no request could carry.
MAX_VALUE_DEPTH = 32
# The longest wait between two attempts to reconnect after an outage. gRPC's own backoff grows
# to 120 s, so a client kept failing UNAVAILABLE for up to ~17 s (longer after a longer
# outage) once the service was back; the Go client's bound is the same, and Java's.
MAX_RECONNECT_BACKOFF_MS = 5_000
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_BACKOFF_MS),
)


def to_protobuf_value(value: Any) -> struct_pb2.Value:
    """The JSON value `value` (dicts, lists, strings, numbers, booleans, None) as the
    google.protobuf.Value the service takes an update as.

    `publish` converts a plain value with this on every call (and every retry); convert once
    and pass the result to `publish` to pay for it once. Raises ValueError, naming the cause,
    when `value` has no such form, or one the service takes: a type JSON lacks, a number
    beyond a double, a lone surrogate in a string, or a value nested more than 32 levels deep
    in objects and arrays (the whole value is level 1; the service's limit).
    """
    return _to_value(value, "value")


def _to_value(value: Any, path: str) -> struct_pb2.Value:
    """`to_protobuf_value`, naming a string UTF-8 cannot carry by its JSON path under `path`
    (`update.content.text`), as the Go, Java and TypeScript clients do."""
    message = struct_pb2.Value()
    try:
        _fill(message, value, 1)
    except (TypeError, ValueError, OverflowError) as error:
        where = _lone_surrogate(value, path, 1) if isinstance(error, UnicodeError) else None
        raise ValueError(f"cannot encode as a google.protobuf.Value: {where or error}"
                         ) from error
    return message


_SURROGATES = re.compile("[\ud800-\udfff]")


def _surrogate_problem(text: str) -> str | None:
    found = _SURROGATES.search(text)
    if found is None:
        return None
    return (f"holds a lone surrogate (U+{ord(found.group()):04X} at index {found.start()}), "
            "which UTF-8 cannot carry: the service takes UTF-8 text only")


def _key_path(path: str, key: str) -> str:
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


_PLAIN_KEY = re.compile("[A-Za-z_][A-Za-z0-9_]*")


def _lone_surrogate(value: Any, path: str, depth: int) -> str | None:
    """Where the first string or key of `value` holds a lone surrogate, and that it does; run
    only once `_fill` refused the value, so the conversion itself pays nothing for it."""
    if isinstance(value, str):
        problem = _surrogate_problem(value)
        return f"{path} {problem}" if problem else None
    if depth > MAX_VALUE_DEPTH:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            name = _json_key(key)
            problem = _surrogate_problem(name)
            if problem:
                return f"a key in {path} {problem}"
            found = _lone_surrogate(item, _key_path(path, name), depth + 1)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{index}]", depth + 1)
            if found:
                return found
    return None


def _fill(message: struct_pb2.Value, value: Any, depth: int) -> None:
    """Sets `message` to `value` directly, accepting and refusing what `json.dumps` then
    `json_format.Parse` would (tests/client/test_values.py compares the two), at a fraction
    of their cost: converting an update was most of what the bridge spent on it."""
    if isinstance(value, str):
        message.string_value = value  # raises on a lone surrogate (no UTF-8 form)
    elif value is None:
        message.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        message.bool_value = value
    elif isinstance(value, int | float):
        number = float(value)  # OverflowError beyond a double
        message.number_value = number if number == number else math.nan  # one NaN, as JSON's
    elif isinstance(value, dict | list | tuple):
        if depth > MAX_VALUE_DEPTH:
            raise ValueError(f"it nests objects and arrays more than {MAX_VALUE_DEPTH} "
                             "levels deep, the service's limit")
        if isinstance(value, dict):
            message.struct_value.SetInParent()  # an empty object is still an object
            _fill_struct(message.struct_value, value, depth)
        else:
            message.list_value.SetInParent()
            values = message.list_value.values
            for item in value:
                _fill(values.add(), item, depth + 1)
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _fill_struct(struct: struct_pb2.Struct, value: dict[Any, Any], depth: int) -> None:
    fields = struct.fields
    for key, item in value.items():
        name = _json_key(key)
        if name in fields:
            raise ValueError(f"duplicate key {name!r}")
        _fill(fields[name], item, depth + 1)


def _json_key(key: Any) -> str:
    """An object key as `json.dumps` writes it."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, int | float):
        return json.dumps(float(key) if isinstance(key, float) else int(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


Request = TypeVar("Request", bound=protobuf_message.Message)


def build_request(request_type: type[Request], **fields: Any) -> Request:
    """`request_type(**fields)`, refusing a text argument UTF-8 cannot carry with a ValueError
    that names it, as an update's text is refused: protobuf's own UnicodeEncodeError names
    only the codec, so a caller could not tell which argument it was."""
    try:
        return request_type(**fields)  # type: ignore[no-any-return]
    except UnicodeError as error:
        for name, value in fields.items():
            problem = _surrogate_problem(value) if isinstance(value, str) else None
            if problem:
                raise ValueError(f"cannot send {request_type.__name__}: {name} {problem}"
                                 ) from error
        raise


def publish_request(session_id: str, update: Any, sequence: int | None
                    ) -> pb.PublishUpdateRequest:
    value = (update if isinstance(update, struct_pb2.Value)
             else _to_value(update, "update"))
    request = build_request(pb.PublishUpdateRequest, session_id=session_id, update=value)
    if sequence is not None:
        request.sequence = sequence
    return request


def normalize_values(updates: Iterable[Any]) -> list[struct_pb2.Value]:
    """The updates of a normalize, each converted as `to_protobuf_value` does."""
    return [_to_value(update, f"updates[{index}]") for index, update in enumerate(updates)]


def watch_request(session_id: str, since_revision: int | None) -> pb.WatchMessagesRequest:
    request = build_request(pb.WatchMessagesRequest, session_id=session_id)
    if since_revision is not None:
        request.since_revision = since_revision
    return request

"""Which field of a request that failed to decode is to blame, read from the protobuf wire.

gRPC hands the server a request's bytes; when the generated parser refuses them (bytes that are
not protobuf, a string that is not UTF-8, a value nested deeper than the parser allows) it
says only that the message is invalid. To name the field, the top-level fields are split
apart on the wire and each is decoded on its own: the first that fails is the culprit. Pure
functions, bounded work: at most MAX_FIELDS_EXAMINED fields are looked at (ADR 0043).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from google.protobuf import descriptor, message

# Past this many top-level fields the request is blamed as a whole: naming the field is a
# courtesy, and must cost little on the event loop.
MAX_FIELDS_EXAMINED = 1000

_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5
_FIXED_SIZES = {_FIXED64: 8, _FIXED32: 4}


class _NotProtobufError(ValueError):
    """The bytes are not a sequence of protobuf fields."""


@dataclass(frozen=True, slots=True)
class Culprit:
    """Why a request did not decode: `field` (the request itself when no field could be
    blamed) and a phrase to follow it."""

    field: str
    reason: str


def _varint(data: bytes, start: int) -> tuple[int, int]:
    """The varint at `start` and the position after it."""
    value, shift, position = 0, 0, start
    while position < len(data) and shift < 64:
        byte = data[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            return value, position
        shift += 7
    raise _NotProtobufError


def _fields(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(field number, start, end) of each top-level field; `data[start:end]` is its encoding."""
    position = 0
    while position < len(data):
        tag, after_tag = _varint(data, position)
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            raise _NotProtobufError
        if wire_type == _VARINT:
            _, end = _varint(data, after_tag)
        elif wire_type == _LENGTH_DELIMITED:
            length, payload = _varint(data, after_tag)
            end = payload + length
        elif wire_type in _FIXED_SIZES:
            end = after_tag + _FIXED_SIZES[wire_type]
        else:  # groups are not used by any message the service reads
            raise _NotProtobufError
        if end > len(data):
            raise _NotProtobufError
        yield number, position, end
        position = end


def _type_name(field: descriptor.FieldDescriptor) -> str:
    if field.message_type is not None:
        return str(field.message_type.full_name)
    return "string" if field.type == field.TYPE_STRING else "value of its type"


def _reason(field: descriptor.FieldDescriptor) -> str:
    if field.type == field.TYPE_STRING:
        return "is not a valid string (text must be UTF-8)"
    if field.message_type is not None:
        return (f"is not a valid {_type_name(field)} (malformed, text that is not UTF-8, or "
                "nested too deeply)")
    return f"is not a valid {_type_name(field)}"


def culprit(message_class: type[message.Message], data: bytes) -> Culprit:
    """The field of `data` (a `message_class` that failed to decode) to blame."""
    whole = Culprit("request", f"is not a valid {message_class.DESCRIPTOR.full_name} message")
    try:
        for count, (number, start, end) in enumerate(_fields(data)):
            if count >= MAX_FIELDS_EXAMINED:
                return whole
            try:
                message_class.FromString(data[start:end])
            except message.DecodeError:
                field = message_class.DESCRIPTOR.fields_by_number.get(number)
                if field is None:
                    return whole
                return Culprit(field.name, _reason(field))
    except _NotProtobufError:
        return whole
    return whole


def string_field(message_class: type[message.Message], data: bytes, name: str) -> str | None:
    """The top-level string field `name` of `data` (a `message_class`), decoding that field
    alone; None when it is absent, malformed, or past the first MAX_FIELDS_EXAMINED fields."""
    number = message_class.DESCRIPTOR.fields_by_name[name].number
    found: str | None = None
    try:
        for count, (field_number, start, end) in enumerate(_fields(data)):
            if count >= MAX_FIELDS_EXAMINED:
                return None
            if field_number == number:  # the last occurrence wins, as in protobuf
                found = getattr(message_class.FromString(data[start:end]), name)
    except (_NotProtobufError, message.DecodeError):
        return None
    return found

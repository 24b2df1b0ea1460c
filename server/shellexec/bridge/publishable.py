"""An update the agent sent, converted once into what is published, or why it cannot be.

An update the service would refuse for its nesting or its encoded size, or one the client
cannot encode as a google.protobuf.Value (a number beyond a double, nesting past protobuf's
own recursion limit), is skipped with a warning, like an update the service refuses: it must
neither stop the forwarding nor fail the run (ADR 0123). A lone surrogate (`"\\ud800"`, valid
JSON but no UTF-8) is not a reason to lose an update: an agent that cuts a long text by UTF-16
units can split a pair, so it becomes U+FFFD, as the service's fold draws one. The Value made
for the check is the one queued and published, so no update is converted twice (ADR 0129).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2

from shellexec.bridge.nesting import values_within
from shellexec.client import to_protobuf_value
from shellexec.rules.limits import MAX_UPDATE_BYTES, MAX_UPDATE_DEPTH

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# How much of the encoder's complaint a warning quotes.
_REASON_CHARS = 200


@dataclass(frozen=True, slots=True)
class Unpublishable:
    """Why an update cannot be published."""

    reason: str


@dataclass(frozen=True, slots=True)
class Encoded:
    """An update as it is published, and about the memory it holds while it waits."""

    value: struct_pb2.Value
    weight: int


# What a google.protobuf.Value holds in memory beyond its encoded bytes, per value: measured
# at 40 to 54 bytes for lists of numbers, of empty lists and of small objects. An update of
# 100,000 numbers encodes to about 1 MB and holds about 5 MB.
VALUE_OVERHEAD_BYTES = 64


def encoded(update: Mapping[str, Any], data: str | None = None) -> Encoded | Unpublishable:
    """`update` as the google.protobuf.Value that is published, or why it cannot be.

    `data`, when given, is a terminal chunk's base64 `data`, left out of `update`: base64
    always encodes, so it is only set into the Value, and counts only towards its size.
    """
    values = values_within(update, MAX_UPDATE_DEPTH)
    if values is None:
        return Unpublishable(f"it nests objects and arrays more than {MAX_UPDATE_DEPTH} "
                             "deep, the service's limit")
    try:
        value = to_protobuf_value(update)
    except ValueError:
        try:  # rarely: only an update that did not encode pays for the copy
            value = to_protobuf_value(_without_lone_surrogates(update))
        except ValueError as error:
            return Unpublishable(f"it cannot be encoded as JSON for the service ({error})"
                                 [:_REASON_CHARS])
    if data is not None:
        value.struct_value.fields["data"].string_value = data
    # The client would send a Value over the gRPC message limit only to fail on its own side
    # (RESOURCE_EXHAUSTED, retried as an outage); the service refuses one over this anyway.
    if (size := value.ByteSize()) > MAX_UPDATE_BYTES:
        return Unpublishable(f"it is {size} bytes encoded, over the service's limit of "
                             f"{MAX_UPDATE_BYTES}")
    return Encoded(value, size + VALUE_OVERHEAD_BYTES * values)


def _without_lone_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate of its strings and keys replaced by U+FFFD (a Python
    string from JSON holds a surrogate only when it is lone: a valid pair is one character).
    The nesting is bounded (checked before), so the recursion is too."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {_without_lone_surrogates(key): _without_lone_surrogates(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    return value

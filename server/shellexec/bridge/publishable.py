"""An update the agent sent, converted once into what is published, or why it cannot be.

An update the service would refuse for its nesting or its encoded size, or one the client
cannot encode as a google.protobuf.Value (a number beyond a double, nesting past protobuf's
own recursion limit), is skipped with a warning, like an update the service refuses: it must
neither stop the forwarding nor fail the run (ADR 0123). A lone surrogate (`"\\ud800"`, valid
JSON but no UTF-8) is not a reason to lose an update: an agent that cuts a long text by UTF-16
units can split a pair, so it becomes U+FFFD, as the service's fold draws one. The Value made
for the check is the one queued and published, so no update is converted twice (ADR 0129).

An update over the service's size limit because of the output in its `rawOutput` or its
`content` is published with each long output text cut to more than the service keeps of it:
Codex's final update repeats a command's whole output (`stdout` and `aggregated_output`), and
2 MB of output made it 4 MiB; grok and Gemini send a whole output as a `content` text. Skipping
it lost the call's status and exit code with the output. Only fields the service reads as plain
text are cut: one it parses (Auggie's tagged sections, Vibe's JSON, a `bash -c '...'` command)
could read differently once cut. A text in `content` may still be one an agent's dialect parses
(Qwen's sections), so a cut update is published only when the fold records it exactly as the
whole one (ADR 0123, since 2026-12-05).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2

from shellexec import normalize
from shellexec.bridge.nesting import Counted, counted_within
from shellexec.client import to_protobuf_value
from shellexec.normalize.markup import has_markup
from shellexec.normalize.text import is_continuation, tail_bytes
from shellexec.rules.limits import (
    MAX_OUTPUT_STREAM_BYTES,
    MAX_STORED_TEXT_BYTES,
    MAX_UPDATE_BYTES,
    MAX_UPDATE_DEPTH,
)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# How much of the encoder's complaint a warning quotes.
_REASON_CHARS = 200


@dataclass(frozen=True, slots=True)
class Unpublishable:
    """Why an update cannot be published."""

    reason: str


@dataclass(frozen=True, slots=True)
class Encoded:
    """An update as it is published, and about the memory it holds while it waits;
    `cut_from` is its encoded size before its long texts were cut (0: not cut)."""

    value: struct_pb2.Value
    weight: int
    cut_from: int = 0


# The fields of a `rawOutput` object the service reads as plain output text
# (normalize/raw_output.py). Beside them, it reads as plain: a `rawOutput` string (unless it is
# JSON text, as Vibe sends), the texts of a block list (Claude's, OMP's `content`), `output`
# without Auggie's section tags, and OpenCode's `metadata.output`.
CUT_FIELDS = ("stdout", "stderr", "aggregated_output", "formatted_output")
# What a cut field keeps: its first 256 KiB and its last 512 KiB. The service keeps an output's
# newest 256 KiB; the tail is twice that, so that the fold still sees an output over its bound
# (and says it was truncated), and the head keeps where the text began.
CUT_HEAD_BYTES = MAX_STORED_TEXT_BYTES
CUT_TAIL_BYTES = 2 * MAX_OUTPUT_STREAM_BYTES


# What a google.protobuf.Value holds in memory beyond its encoded bytes, per value: measured
# at 40 to 54 bytes for lists of numbers, of empty lists and of small objects. An update of
# 100,000 numbers encodes to about 1 MB and holds about 5 MB.
VALUE_OVERHEAD_BYTES = 64
# ... and per object beyond that (its Struct and the map holding its fields): measured at 200
# to 270 bytes. Weighed by their values alone, updates of many small objects (`{"a": null}`,
# `{"k": {"k": {}}}`) held 2.3 to 2.9 times their weight, so a full buffer of 64 MiB held
# about 240 MB; with this, what they hold stays under their weight (0.6 to 0.9 of it).
OBJECT_OVERHEAD_BYTES = 256


def encoded(update: Mapping[str, Any], data: str | None = None,
            agent: str | None = None) -> Encoded | Unpublishable:
    """`update` as the google.protobuf.Value that is published, or why it cannot be.

    `data`, when given, is a terminal chunk's base64 `data`, left out of `update`: base64
    always encodes, so it is only set into the Value, and counts only towards its size.
    `agent` is the normalization hint the service folds the update with.
    """
    counted = counted_within(update, MAX_UPDATE_DEPTH)
    if counted is None:
        return Unpublishable(f"it nests objects and arrays more than {MAX_UPDATE_DEPTH} "
                             "deep, the service's limit")
    value = _value(update, data)
    if isinstance(value, Unpublishable):
        return value
    # The client would send a Value over the gRPC message limit only to fail on its own side
    # (RESOURCE_EXHAUSTED, retried as an outage); the service refuses one over this anyway.
    if (size := value.ByteSize()) > MAX_UPDATE_BYTES:
        shorter = _long_texts_cut(update)
        cut = _value(shorter, data)
        if isinstance(cut, Unpublishable) or cut.ByteSize() > MAX_UPDATE_BYTES:
            return Unpublishable(f"it is {size} bytes encoded, over the service's limit of "
                                 f"{MAX_UPDATE_BYTES}, even with its output fields cut")
        if not _recorded_alike(update, shorter, agent):
            return Unpublishable(f"it is {size} bytes encoded, over the service's limit of "
                                 f"{MAX_UPDATE_BYTES}, and its output cut would be recorded "
                                 "differently")
        return Encoded(cut, cut.ByteSize() + _held_beyond_bytes(counted), cut_from=size)
    return Encoded(value, size + _held_beyond_bytes(counted))


def _held_beyond_bytes(counted: Counted) -> int:
    """What the Value of an update holding `counted` holds beyond its encoded bytes."""
    return VALUE_OVERHEAD_BYTES * counted.values + OBJECT_OVERHEAD_BYTES * counted.objects


def _recorded_alike(update: Mapping[str, Any], cut: Mapping[str, Any],
                    agent: str | None) -> bool:
    """Whether the fold records `cut` as it records `update` (from a call it alone makes):
    the status, the exit code and the output the service keeps. Paid only by an update over
    the limit."""
    def record(one: Mapping[str, Any]) -> normalize.ShellRecord:
        return normalize.shell_record(normalize.fold_all([one], agent=agent))

    return record(cut) == record(update)


def _value(update: Mapping[str, Any], data: str | None) -> struct_pb2.Value | Unpublishable:
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
    return value


def _long_texts_cut(update: Mapping[str, Any]) -> Mapping[str, Any]:
    """`update` with each text its `rawOutput` or its `content` holds as plain output that is
    longer than CUT_HEAD_BYTES + CUT_TAIL_BYTES in UTF-8 cut to its first CUT_HEAD_BYTES and
    its last CUT_TAIL_BYTES, on character boundaries. Texts the service parses are left whole."""
    content = update.get("content")
    if isinstance(content, list):
        update = {**update, "content": [_block_cut(block) for block in content]}
    raw = update.get("rawOutput")
    if isinstance(raw, str):
        return {**update, "rawOutput": raw if raw.lstrip().startswith("{") else _cut(raw)}
    if isinstance(raw, list):
        return {**update, "rawOutput": [_block_cut(block) for block in raw]}
    if isinstance(raw, Mapping):
        return {**update, "rawOutput": {key: _field_cut(raw, key, value)
                                        for key, value in raw.items()}}
    return update


def _field_cut(raw: Mapping[str, Any], key: str, value: Any) -> Any:
    if isinstance(value, str) and key in CUT_FIELDS:
        return _cut(value)
    if isinstance(value, str) and key == "output" and ("metadata" in raw
                                                      or not has_markup(value)):
        return _cut(value)
    if key == "metadata" and isinstance(value, Mapping) and isinstance(value.get("output"), str):
        return {**value, "output": _cut(value["output"])}
    if key == "content" and isinstance(value, list):
        return [_block_cut(block) for block in value]
    return value


def _block_cut(block: Any) -> Any:
    """A text block (bare, or in ACP's `content` wrapper) with its text cut."""
    if not isinstance(block, Mapping):
        return block
    if block.get("type") == "content" and isinstance(block.get("content"), Mapping):
        return {**block, "content": _block_cut(block["content"])}
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return {**block, "text": _cut(block["text"])}
    return block


def _cut(text: str) -> str:
    # A character is at most 4 bytes: a text of fewer characters than the kept bytes / 4 is
    # kept without encoding it.
    if 4 * len(text) <= CUT_HEAD_BYTES + CUT_TAIL_BYTES:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= CUT_HEAD_BYTES + CUT_TAIL_BYTES:
        return text
    end = CUT_HEAD_BYTES
    while is_continuation(raw[end]):  # the character the head would split is left out
        end -= 1
    # ... and so is the one the tail would (`tail_bytes` starts on a character).
    return (raw[:end] + tail_bytes(raw, CUT_TAIL_BYTES)).decode("utf-8", "surrogatepass")


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

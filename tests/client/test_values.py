"""`to_protobuf_value` builds a google.protobuf.Value directly. It must accept exactly what
the JSON route it replaced accepted (`json.dumps`, then protobuf's `json_format.Parse`) and
build the same Value, so this compares the two on tricky and on generated values."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from shellexec.client import to_protobuf_value
from shellexec.client._values import MAX_VALUE_DEPTH, normalize_values, publish_request
from shellexec.v1 import shell_exec_service_pb2 as pb


class Level(enum.IntEnum):
    LOW = 1


def through_json(value: Any) -> bytes | None:
    """The Value's wire form by the JSON route, None where that route refuses the value."""
    message = struct_pb2.Value()
    try:
        json_format.Parse(json.dumps(value), message)
        return bytes(message.SerializeToString(deterministic=True))
    except (json_format.ParseError, TypeError, ValueError, RecursionError):
        return None


def directly(value: Any) -> bytes | None:
    """The Value's wire form as `to_protobuf_value` builds it, None where it refuses (with
    the error its callers match on)."""
    try:
        return bytes(to_protobuf_value(value).SerializeToString(deterministic=True))
    except ValueError as error:
        refusal = str(error)
    assert refusal.startswith("cannot encode as a google.protobuf.Value: ")
    return None


def nested(levels: int, innermost: Any, as_objects: bool) -> Any:
    value = innermost
    for _ in range(levels):
        value = {"a": value} if as_objects else [value]
    return value


TRICKY = {
    "nan": float("nan"), "infinity": float("-inf"), "negative zero": -0.0,
    "integer beyond a double": 10 ** 400, "integer past 2**53": 2 ** 53 + 1,
    "int enum": Level.LOW, "lone surrogate": "\ud800", "lone surrogate key": {"\udc00": 1},
    "integer key": {1: "a"}, "float key": {1.5: 1}, "nan key": {float("nan"): 1},
    "boolean and null keys": {True: 1, False: 2, None: 3}, "enum key": {Level.LOW: 1},
    "keys that collide": {1: "a", "1": "b"}, "tuple key": {(1,): 2}, "tuple": (1, "x"),
    "set": {1}, "bytes": b"x", "object": object(), "empty object": {}, "empty array": [],
    "null": None, "text NaN": "NaN", "nested": {"a": [1, {"b": [None, True, "x"]}]},
}


@pytest.mark.parametrize("value", TRICKY.values(), ids=TRICKY.keys())
def test_a_tricky_value_is_taken_or_refused_as_by_json(value: Any) -> None:
    assert directly(value) == through_json(value)


@pytest.mark.parametrize("as_objects", [False, True], ids=["arrays", "objects"])
@pytest.mark.parametrize("innermost", [1, [], {}], ids=["number", "empty array",
                                                         "empty object"])
@pytest.mark.parametrize("levels", [0, 1, MAX_VALUE_DEPTH - 2, MAX_VALUE_DEPTH - 1])
def test_a_value_within_the_service_s_depth_is_built_as_by_json(levels: int, innermost: Any,
                                                                 as_objects: bool) -> None:
    value = nested(levels, innermost, as_objects)
    assert directly(value) == through_json(value) is not None


@pytest.mark.parametrize("as_objects", [False, True], ids=["arrays", "objects"])
@pytest.mark.parametrize("levels", [MAX_VALUE_DEPTH + 1, MAX_VALUE_DEPTH + 3, 60, 200])
def test_a_value_deeper_than_the_service_takes_is_refused(levels: int,
                                                         as_objects: bool) -> None:
    """Protobuf's parser takes arrays to 50 levels and objects to about 34 (an object level is
    three nested messages): 35 to 50 levels of objects made a Value that no request could
    carry, and publishing it failed with protobuf's DecodeError instead of an error naming
    the limit."""
    assert directly(nested(levels, 1, as_objects)) is None
    with pytest.raises(ValueError, match=f"more than {MAX_VALUE_DEPTH} levels deep"):
        to_protobuf_value(nested(levels, 1, as_objects))


def test_the_depth_limit_is_reached_and_not_passed() -> None:
    # Arrays and objects nest 32 deep, a number inside the deepest; no container deeper.
    assert directly(nested(MAX_VALUE_DEPTH - 1, [], False)) is not None
    assert directly(nested(MAX_VALUE_DEPTH, 1, False)) is not None
    assert directly(nested(MAX_VALUE_DEPTH, 1, True)) is not None
    assert directly(nested(MAX_VALUE_DEPTH, [], False)) is None
    assert directly(nested(MAX_VALUE_DEPTH, {}, True)) is None


@pytest.mark.parametrize("as_objects", [False, True], ids=["arrays", "objects"])
def test_the_deepest_value_built_fits_a_request(as_objects: bool) -> None:
    deepest = to_protobuf_value(nested(MAX_VALUE_DEPTH, "bottom", as_objects))
    request = pb.NormalizeShellExecRequest(updates=[deepest])
    assert pb.NormalizeShellExecRequest.FromString(request.SerializeToString()) == request
    publish = pb.PublishUpdateRequest(session_id="ses_x", update=deepest)
    assert pb.PublishUpdateRequest.FromString(publish.SerializeToString()) == publish


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.tuples(children)
    | st.dictionaries(st.text(max_size=4) | st.integers(), children, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_like_value_is_built_as_by_json(value: Any) -> None:
    assert directly(value) == through_json(value)


LONE = "which UTF-8 cannot carry: the service takes UTF-8 text only"


@pytest.mark.parametrize(("value", "where"), [
    ({"content": {"text": "lone \ud800 high"}}, "value.content.text holds a lone surrogate "
                                                "(U+D800 at index 5)"),
    ({"odd key": {"k\udc00": 1}}, 'a key in value["odd key"] holds a lone surrogate '
                                  "(U+DC00 at index 1)"),
    (["a", ("b", ["\udbff"])], "value[1][1][0] holds a lone surrogate (U+DBFF at index 0)"),
    ("\ud800", "value holds a lone surrogate (U+D800 at index 0)"),
])
def test_a_lone_surrogate_is_refused_naming_where_it_is(value: Any, where: str) -> None:
    """The refusal named the character and its position alone, not where in the value the
    string was (as the Go, Java and TypeScript clients do now)."""
    with pytest.raises(ValueError, match="lone surrogate") as refused:
        to_protobuf_value(value)
    assert str(refused.value) == f"cannot encode as a google.protobuf.Value: {where}, {LONE}"


def test_publish_and_normalize_name_the_update_holding_a_lone_surrogate() -> None:
    with pytest.raises(ValueError, match=r"^cannot encode as a google\.protobuf\.Value: "
                                         r"update\.content\.text holds a lone surrogate"):
        publish_request("ses_1", {"content": {"text": "x\ud800"}}, 1)
    with pytest.raises(ValueError, match=r": updates\[1\]\.t holds a lone surrogate \(U\+D800"):
        normalize_values([{}, {"t": "\ud800"}])

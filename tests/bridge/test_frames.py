"""The pure part of the bridge's reader of the agent's stdout: cutting frames within a cap,
and keeping only the JSON-RPC messages the SDK can take."""

from __future__ import annotations

import json

import pytest

from shellexec.bridge.frames import (
    FrameSplitter,
    Oversized,
    Refused,
    holds_more_values_than,
    read_message,
)
from shellexec.bridge.notifications import unserved_method


def test_frames_end_at_newlines_across_chunks() -> None:
    splitter = FrameSplitter(cap=10)
    assert splitter.feed(b'{"a"') == []
    assert splitter.feed(b':1}\n{}\n{"b"') == [b'{"a":1}', b"{}"]
    assert splitter.feed(b":2}") == []
    assert splitter.end() == [b'{"b":2}']
    assert splitter.end() == []


def test_a_frame_of_the_cap_is_kept_and_one_byte_more_is_dropped_with_its_size() -> None:
    splitter = FrameSplitter(cap=4)
    assert splitter.feed(b"1234\n12345\n") == [b"1234", Oversized(5)]


def test_a_dropped_frame_is_counted_to_its_end_and_the_next_one_is_whole() -> None:
    splitter = FrameSplitter(cap=4)
    frames = [frame for chunk in (b"12", b"345", b"6789", b"0\nok", b"\n")
              for frame in splitter.feed(chunk)]
    assert frames == [Oversized(10), b"ok"]


def test_a_frame_over_the_cap_at_the_end_of_the_stream_is_reported() -> None:
    splitter = FrameSplitter(cap=2)
    assert splitter.feed(b"abc") == []
    assert splitter.end() == [Oversized(3)]


def test_the_splitter_holds_no_more_than_the_cap_of_a_frame_going_on() -> None:
    splitter = FrameSplitter(cap=8)
    for _ in range(1000):
        splitter.feed(b"x" * 5)
    assert splitter._parts == []  # everything past the cap was let go
    assert splitter.feed(b"\n") == [Oversized(5000)]


def test_a_json_rpc_message_is_taken_as_parsed() -> None:
    message = {"jsonrpc": "2.0", "id": "a", "method": "fs/read_text_file", "params": {}}
    assert read_message(json.dumps(message).encode()) == message
    for request_id in (7, None):
        assert read_message(json.dumps({"jsonrpc": "2.0", "id": request_id,
                                        "result": {}}).encode()) == {
            "jsonrpc": "2.0", "id": request_id, "result": {}}


def test_a_blank_line_is_skipped_silently() -> None:
    assert read_message(b"  \r") is None


@pytest.mark.parametrize(("frame", "reason"), [
    (b"[]", "a JSON array: a batch, which ACP does not use"),
    (b"null", "not a JSON object but null"),
    (b'"text"', "not a JSON object but a string"),
    (b'{"id": [1], "result": {}}', "id must be a string, an integer or null, not an array"),
    (b'{"id": true, "result": {}}', "id must be a string, an integer or null, not a boolean"),
    (b'{"id": 1.5, "result": {}}', "id must be a string, an integer or null, not a number"),
    (b'{"method": 3}', "method must be a string, not a number"),
    (b'{"id": 1, "error": "bad"}', "error must be an object, not a string"),
    (b'{"id": 1, "result": [[[[[1]]]]]}', "nested deeper than 5 levels"),
    (b"[" * 1200 + b"]" * 1200, "nested deeper than 5 levels"),  # past json.loads's limit
])
def test_anything_else_is_refused_with_the_reason(frame: bytes, reason: str) -> None:
    assert read_message(frame, max_depth=5) == Refused(len(frame), reason)


def test_a_frame_that_is_not_json_is_refused_with_the_parser_s_words() -> None:
    refused = read_message(b'{"id": ', max_depth=5)
    assert isinstance(refused, Refused)
    assert refused.reason.startswith("not JSON: Expecting value")
    assert isinstance(read_message(b"\xff\xfe{", max_depth=5), Refused)


@pytest.mark.parametrize(("number", "reason"), [
    (b"NaN", "not JSON: NaN is not a JSON value"),
    (b"Infinity", "not JSON: Infinity is not a JSON value"),
    (b"-Infinity", "not JSON: -Infinity is not a JSON value"),
    (b"1e400", "not JSON: the number 1e400 is beyond a double"),
    (b"-2.5e999", "not JSON: the number -2.5e999 is beyond a double"),
])
def test_numbers_json_does_not_have_or_no_double_holds_are_refused(number: bytes,
                                                                   reason: str) -> None:
    """Python's reader takes NaN and Infinity, and reads 1e400 as infinity: the service
    would have stored a number the agent never wrote."""
    frame = b'{"jsonrpc": "2.0", "method": "session/update", "params": {"n": ' + number + b"}}"
    assert read_message(frame, max_depth=5) == Refused(len(frame), reason)


def test_large_and_tiny_doubles_and_their_spellings_as_strings_are_taken() -> None:
    frame = b'{"id": 1, "result": [1.7e308, 5e-324, -0.0, "NaN", "Infinity"]}'
    assert read_message(frame, max_depth=5) == {
        "id": 1, "result": [1.7e308, 5e-324, -0.0, "NaN", "Infinity"]}


def test_nesting_up_to_the_bound_is_taken() -> None:
    frame = b'{"id": 1, "result": [[[1]]]}'  # the object, then three arrays: 4 levels
    assert read_message(frame, max_depth=4) == json.loads(frame)
    assert read_message(frame, max_depth=3) == Refused(len(frame), "nested deeper than 3 levels")


@pytest.mark.parametrize(("message", "unserved"), [
    ({"jsonrpc": "2.0", "method": "session/update", "params": {}}, None),
    ({"jsonrpc": "2.0", "method": "_zed/progress"}, None),  # an extension: ignored silently
    ({"jsonrpc": "2.0", "id": 1, "method": "no/such"}, None),  # a request: answered
    ({"jsonrpc": "2.0", "id": None, "method": "no/such"}, None),
    ({"jsonrpc": "2.0", "id": 1, "result": {}}, None),  # a response
    ({"jsonrpc": "2.0", "method": "no/such"}, "no/such"),
    ({"jsonrpc": "2.0", "method": "elicitation/complete"}, "elicitation/complete"),
])
def test_only_notifications_of_methods_the_bridge_does_not_serve_are_unserved(
        message: dict[str, object], unserved: str | None) -> None:
    assert unserved_method(message) == unserved


def _values(value: object) -> int:
    if isinstance(value, dict):
        return 1 + sum(_values(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(item) for item in value)
    return 1


@pytest.mark.parametrize("text", [
    '[0,0,0]', '{"a":1,"b":[2,3],"c":{"d":null}}', '"a,b,[c{"', '["x\\",[", "\\\\", 1, {}]',
    '{"jsonrpc":"2.0","method":"session/update","params":{"update":{"t":"a,b"}}}', '7',
])
def test_the_value_count_from_the_bytes_is_never_below_the_real_count(text: str) -> None:
    frame = text.encode()
    count = _values(json.loads(frame))
    assert holds_more_values_than(frame, count - 1)
    # exact unless a container is empty ({} counts one value too many)
    assert not holds_more_values_than(frame, count + text.count("{}"))


def test_commas_and_brackets_in_strings_are_not_values() -> None:
    frame = json.dumps({"text": ",[{" * 1000, "escaped": '\\",' * 1000}).encode()
    assert not holds_more_values_than(frame, 3)


def test_a_frame_over_the_value_limit_is_refused_before_it_is_parsed() -> None:
    frame = b'{"a":[' + b",".join([b"0"] * 9) + b"]}"  # 11 values
    assert isinstance(read_message(frame, max_values=11), dict)
    assert read_message(frame, max_values=10) == Refused(len(frame),
                                                         "it holds more than 10 JSON values")
    unparsable = b"[0," * 4 + b"not json at all"
    assert read_message(unparsable, max_values=3) == Refused(len(unparsable),
                                                             "it holds more than 3 JSON values")

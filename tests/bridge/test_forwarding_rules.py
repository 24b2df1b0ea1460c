"""The forwarder's rules, without a service: which updates it skips and why, which refusals
end the run, what stops the drain, and what a full buffer says."""

from __future__ import annotations

import asyncio
import base64
import logging
import subprocess
import sys
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2

from shellexec import normalize
from shellexec.api.convert import ValueBudget, python_value
from shellexec.bridge.coalescing import TAIL_BYTES
from shellexec.bridge.errors import (
    BufferFullError,
    ForwardingError,
    ServiceRejectedError,
    refuses_only_the_update,
)
from shellexec.bridge.forwarder import BufferLimits, Forwarder, Update
from shellexec.bridge.nesting import nests_deeper_than
from shellexec.bridge.publishable import (
    CUT_HEAD_BYTES,
    CUT_TAIL_BYTES,
    OBJECT_OVERHEAD_BYTES,
    VALUE_OVERHEAD_BYTES,
    Encoded,
    Unpublishable,
    encoded,
)
from shellexec.client import ErrorDetails
from shellexec.rules.limits import MAX_UPDATE_BYTES, MAX_UPDATE_DEPTH
from shellexec.service import InvalidArgumentError


def _nested(depth: int) -> dict[str, Any]:
    """An update whose objects nest `depth` deep (the update itself is level 1)."""
    value: Any = "bottom"
    for _ in range(depth - 1):
        value = {"deeper": value}
    return {"sessionUpdate": "agent_message_chunk", "x": value}


def _service_refuses(update: dict[str, Any]) -> bool:
    value = struct_pb2.Value()
    json_format.ParseDict(update, value)  # as any client sends it (the Python one refuses)
    try:
        python_value(value, "update", ValueBudget("update"))
    except InvalidArgumentError:
        return True
    return False


@pytest.mark.parametrize("depth", [MAX_UPDATE_DEPTH, MAX_UPDATE_DEPTH + 1])
def test_the_depth_check_is_the_service_s_own(depth: int) -> None:
    update = _nested(depth)
    assert nests_deeper_than(update, MAX_UPDATE_DEPTH) == _service_refuses(update)
    assert isinstance(encoded(update), Unpublishable) == (depth > MAX_UPDATE_DEPTH)


def test_lists_count_as_levels_and_no_nesting_exhausts_the_stack() -> None:
    value: Any = []
    for _ in range(100_000):
        value = [value]
    assert nests_deeper_than({"x": [[1]]}, 3) is False
    assert nests_deeper_than({"x": [[[]]]}, 3) is True
    assert nests_deeper_than(value, MAX_UPDATE_DEPTH) is True


def test_what_the_client_cannot_encode_is_unpublishable() -> None:
    why = encoded({"sessionUpdate": "agent_message_chunk", "_meta": {"x": 10 ** 400}})
    assert isinstance(why, Unpublishable)
    assert why.reason.startswith("it cannot be encoded as JSON for the service")


def test_a_lone_surrogate_is_published_as_a_replacement_character() -> None:
    """An agent that cuts text by UTF-16 units splits a pair: the update is kept."""
    value = encoded({"sessionUpdate": "agent_message_chunk",
                     "content": {"type": "text", "text": "tail \ud83d"},
                     "_meta": {"k\udc00": ["\ud800x"]}})
    assert not isinstance(value, Unpublishable)
    assert json_format.MessageToDict(value.value) == {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "tail \ufffd"},
        "_meta": {"k\ufffd": ["\ufffdx"]}}


def _refusal(code: str) -> ServiceRejectedError:
    return ServiceRejectedError("publish update #1", code, "no", ErrorDetails())


@pytest.mark.parametrize(("code", "only_the_update"), [
    ("INVALID_ARGUMENT", True), ("FAILED_PRECONDITION", True), ("NOT_FOUND", False),
    ("ALREADY_EXISTS", False), ("PERMISSION_DENIED", False), ("UNAUTHENTICATED", False),
    ("UNIMPLEMENTED", False),
])
def test_which_refusals_skip_the_update(code: str, only_the_update: bool) -> None:
    assert refuses_only_the_update(_refusal(code)) is only_the_update


def _say(text: str) -> Update:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


async def _forward(updates: list[object], refuse: dict[str, str]
                   ) -> tuple[list[int], Forwarder, BaseException | None]:
    """Publishes `updates`; an update whose text is a key of `refuse` is refused with that
    code, one whose text is `crash` raises an error no rule expects."""
    published: list[int] = []

    async def publish(sequence: int, update: struct_pb2.Value) -> bool:
        text = update.struct_value.fields["content"].struct_value.fields["text"].string_value
        if text == "crash":
            raise KeyError("something nobody handled")
        if text in refuse:
            raise _refusal(refuse[text])
        published.append(sequence)
        return False

    forwarder = Forwarder(BufferLimits())
    for update in updates:
        forwarder.enqueue(update)
    forwarder.start(publish)
    try:
        await asyncio.wait_for(forwarder.flush(), 10)
    except (ForwardingError, ServiceRejectedError) as error:
        return published, forwarder, error
    finally:
        await forwarder.stop()
    return published, forwarder, None


def test_an_update_refused_for_itself_is_skipped_with_its_number_and_why(
        caplog: pytest.LogCaptureFixture) -> None:
    updates: list[object] = [_say("a"), _say("held"), _nested(40), _say("bad"), _say("b")]
    with caplog.at_level(logging.WARNING, "shellexec.bridge"):
        published, forwarder, error = asyncio.run(_forward(
            updates, {"held": "FAILED_PRECONDITION", "bad": "INVALID_ARGUMENT"}))

    assert error is None
    assert published == [1, 5]
    assert forwarder.stats.rejected == 3
    warnings = caplog.text
    assert "service refused update #2 (agent_message_chunk): FAILED_PRECONDITION" in warnings
    assert "update #3 (agent_message_chunk) cannot be published: it nests" in warnings
    assert "service refused update #4 (agent_message_chunk): INVALID_ARGUMENT" in warnings


def test_a_refusal_of_the_whole_run_ends_it() -> None:
    published, _, error = asyncio.run(_forward([_say("a"), _say("gone"), _say("b")],
                                               {"gone": "NOT_FOUND"}))
    assert published == [1]
    assert isinstance(error, ServiceRejectedError)
    assert error.code == "NOT_FOUND"


def test_any_error_that_stops_the_drain_ends_flush_with_a_clear_message() -> None:
    published, forwarder, error = asyncio.run(_forward([_say("a"), _say("crash"), _say("b")],
                                                       {}))
    assert published == [1]
    assert isinstance(error, ForwardingError)
    assert forwarder.failure is error
    assert str(error) == ("publishing update #2 failed unexpectedly (KeyError: 'something "
                          "nobody handled'); it and later updates were not published")
    assert error.exit_code == 3


def test_a_chunk_that_fills_the_buffer_is_counted_once() -> None:
    """A terminal chunk is queued before the limits are checked (merging and cutting may make
    room): one that fills the buffer was counted both waiting and dropped."""
    forwarder = Forwarder(BufferLimits(max_updates=3))
    forwarder.enqueue({"sessionUpdate": "tool_call", "toolCallId": "c1"})
    for terminal in ("t1", "t2", "t3"):
        forwarder.enqueue(_chunk(b"x", terminal))

    assert isinstance(forwarder.failure, BufferFullError)
    assert (forwarder.failure.pending, forwarder.failure.dropped) == (4, 0)


def test_a_full_buffer_says_how_many_updates_were_never_published() -> None:
    forwarder = Forwarder(BufferLimits(max_updates=3))
    for n in range(8):
        forwarder.enqueue(_say(str(n)))

    assert isinstance(forwarder.failure, BufferFullError)
    assert (forwarder.failure.pending, forwarder.failure.dropped) == (3, 5)
    assert str(forwarder.failure) == (
        "update buffer full (updates limit 3, --max-buffered-updates) while the service lagged "
        "behind; 3 update(s) waiting were never published and 5 later one(s) were dropped; the "
        "agent was cancelled")


# Builds updates of many small objects, keeps their Values as the buffer does, and prints what
# they hold (resident memory) and what they weigh.
_HELD_OBJECTS = """
import gc, json, re, sys
from pathlib import Path
from shellexec.bridge.publishable import encoded

def rss():
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"^VmRSS:\\s+(\\d+) kB$", status, re.MULTILINE)[1]) * 1024

shapes = {"null": lambda: {"a": None}, "three": lambda: {"a": 1, "b": 2, "c": 3},
          "nested": lambda: {"k": {"k": {}}}}
make = shapes[sys.argv[1]]
gc.collect()
before, held, weight = rss(), [], 0
for _ in range(40):
    weighed = encoded(json.loads(json.dumps(
        {"sessionUpdate": "agent_message_chunk", "v": [make() for _ in range(6000)]})))
    held.append(weighed.value)
    weight += weighed.weight
gc.collect()
print(rss() - before, weight)
"""


@pytest.mark.parametrize("shape", ["null", "three", "nested"])
def test_waiting_updates_of_small_objects_hold_no_more_than_their_weight(shape: str) -> None:
    """An object's Value holds a Struct and a map beyond its values: weighed by its values
    alone, updates of `{"a": null}` held 2.3 times their weight, and a full buffer of 64 MiB
    held about 240 MB (a probe of the bridge). In a process of its own, so that its resident
    memory is theirs."""
    printed = subprocess.run([sys.executable, "-c", _HELD_OBJECTS, shape], check=True,
                             capture_output=True, text=True).stdout
    held, weight = map(int, printed.split())
    assert held <= weight, (held, weight)


def _chunk(data: bytes, terminal: str = "t1") -> Update:
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal,
            "data": base64.b64encode(data).decode("ascii"),
            "_meta": {"shellexec_tool_call_id": f"call-{terminal}"}}


def test_waiting_updates_are_weighed_by_the_memory_their_values_hold() -> None:
    """99,000 numbers are 198 KB of JSON but hold about 5 MB as a google.protobuf.Value:
    weighed as JSON, 320 of them fit the default 64 MiB and held 1.1 GB."""
    dense = {"sessionUpdate": "agent_message_chunk", "x": [0] * 99_000}
    weighed = encoded(dense)
    assert isinstance(weighed, Encoded)
    assert weighed.weight == (weighed.value.ByteSize() + VALUE_OVERHEAD_BYTES * 99_003
                              + OBJECT_OVERHEAD_BYTES)
    text = encoded({"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "y" * 200_000}})
    assert isinstance(text, Encoded)
    assert 200_000 < text.weight < 201_000  # text weighs about its length
    forwarder = Forwarder(BufferLimits())
    for _ in range(320):
        forwarder.enqueue(dense)
    assert isinstance(forwarder.failure, BufferFullError)
    assert forwarder.failure.pending < 11


def test_terminal_output_waiting_stays_bounded_however_much_arrives() -> None:
    # Nothing is published meanwhile: the head waits (it may be in flight), the rest merge.
    # Each terminal names a call announced ahead of it: only chunks of calls the service
    # stores pass each other (ADR 0123).
    forwarder = Forwarder(BufferLimits(max_bytes=4 * TAIL_BYTES))
    for terminal in ("t1", "t2"):
        forwarder.enqueue({"sessionUpdate": "tool_call", "toolCallId": f"call-{terminal}"})
    for n in range(500):
        for terminal in ("t1", "t2"):
            forwarder.enqueue(_chunk(bytes([n % 256]) * 65_536, terminal))

    assert forwarder.failure is None
    # The head (it may be in flight), the other call, then one chunk per terminal.
    assert forwarder.pending == 4
    assert forwarder.stats.merged == 998


def test_an_update_kind_with_a_newline_is_logged_on_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    forged = {"sessionUpdate": "x\nshellexec bridge: published 99 updates", "v": _nested(40)}
    with caplog.at_level(logging.WARNING, "shellexec.bridge"):
        asyncio.run(_forward([forged], {}))
    [line] = [record.getMessage() for record in caplog.records if "cannot be published" in
              record.getMessage()]
    assert "\n" not in line
    assert "(x\\nshellexec bridge: published 99 updates)" in line


def _codex_end(output: str) -> dict[str, Any]:
    """Codex's final update: the whole output twice, and its own cut of it."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed",
            "rawOutput": {"stdout": output, "stderr": "", "aggregated_output": output,
                          "formatted_output": output[-10_000:], "exit_code": 0}}


def test_an_update_over_the_service_s_size_is_published_with_its_long_texts_cut() -> None:
    # 2.2 MB of output, twice: 4.4 MB encoded, over the service's 4 MiB.
    output = "".join(f"line {n:07d} of the build\n" for n in range(90_000))
    published = encoded(_codex_end(output))
    assert isinstance(published, Encoded)
    assert published.cut_from > MAX_UPDATE_BYTES >= published.value.ByteSize()
    raw = json_format.MessageToDict(published.value)["rawOutput"]
    kept = output[:CUT_HEAD_BYTES] + output[-CUT_TAIL_BYTES:]
    assert raw["stdout"] == raw["aggregated_output"] == kept
    assert raw["formatted_output"] == output[-10_000:]  # short texts are as they were
    assert (raw["exit_code"], raw["stderr"]) == (0, "")


BIG_OUTPUT = "".join(f"line {n:07d} of the build\n" for n in range(200_000))  # 5 MB


@pytest.mark.parametrize(("agent", "final"), [
    ("claude", {"rawOutput": BIG_OUTPUT}),
    ("claude", {"rawOutput": [{"type": "text", "text": BIG_OUTPUT}]}),
    ("opencode", {"rawOutput": {"output": BIG_OUTPUT, "metadata": {
        "output": BIG_OUTPUT, "exit": 3}}}),
    ("", {"rawOutput": {"output": BIG_OUTPUT, "exit_code": 2}}),
    ("", {"rawOutput": {"content": [{"type": "text", "text": BIG_OUTPUT}],
                        "details": {"exitCode": 2}}}),
    # grok and Gemini send the whole output as the call's own `content` text; Goose and
    # Copilot close it with their exit text, which the tail keeps.
    ("grok", {"content": [{"type": "content", "content": {"type": "text",
                                                          "text": BIG_OUTPUT}}]}),
    ("gemini", {"content": [{"type": "content", "content": {"type": "text",
                                                            "text": BIG_OUTPUT}}]}),
    ("goose", {"content": [{"type": "content", "content": {
        "type": "text", "text": BIG_OUTPUT + "\n\nCommand exited with code 3"}}]}),
    ("copilot", {"content": [{"type": "content", "content": {
        "type": "text", "text": BIG_OUTPUT + "<exited with exit code 4>"}}]}),
], ids=["string", "blocks", "opencode", "output", "omp-content", "grok", "gemini", "goose",
        "copilot"])
def test_every_plain_output_shape_is_cut_and_folds_as_the_whole_one(
        agent: str, final: dict[str, Any]) -> None:
    start = {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
             "status": "in_progress", "rawInput": {"command": "make"}}
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "failed",
              **final}
    published = encoded(update, agent=agent or None)
    assert isinstance(published, Encoded)
    assert published.cut_from > MAX_UPDATE_BYTES
    sent = json_format.MessageToDict(published.value)
    assert (normalize.shell_record(normalize.fold_all([start, sent], agent=agent or None))
            == normalize.shell_record(normalize.fold_all([start, update],
                                                         agent=agent or None)))


def test_a_cut_text_keeps_whole_characters_at_both_ends() -> None:
    # Four-byte characters, offset by one byte and by two, so both cuts fall inside one.
    output = "a" + "\U0001F600" * 1_200_000 + "bc"
    published = encoded(_codex_end(output))
    assert isinstance(published, Encoded)
    stdout = json_format.MessageToDict(published.value)["rawOutput"]["stdout"]
    head, tail = stdout[:CUT_HEAD_BYTES // 4], stdout[CUT_HEAD_BYTES // 4:]
    assert head == "a" + "\U0001F600" * (CUT_HEAD_BYTES // 4 - 1)  # the split one is left out
    assert tail == "\U0001F600" * ((CUT_TAIL_BYTES - 2) // 4) + "bc"
    assert len(stdout.encode()) <= CUT_HEAD_BYTES + CUT_TAIL_BYTES


@pytest.mark.parametrize("update", [
    # Texts the service parses, which could read differently once cut: Auggie's sections
    # (a cut could take `</output>` and the return code with it), Vibe's JSON string, a
    # command wrapped in a shell.
    {"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "completed",
     "rawOutput": {"output": "<output>" + "x" * MAX_UPDATE_BYTES + "</output>\n"
                             "<return-code>\n1\n</return-code>"}},
    {"sessionUpdate": "tool_call_update", "toolCallId": "v", "status": "completed",
     "rawOutput": '{"stdout": "' + "x" * MAX_UPDATE_BYTES + '", "returncode": 3}'},
    {"sessionUpdate": "tool_call", "toolCallId": "w", "kind": "execute",
     "rawInput": {"command": "/bin/bash -lc 'echo " + "x" * MAX_UPDATE_BYTES + "'"}},
    # Output fields each short enough to keep whole, too many of them.
    {"sessionUpdate": "tool_call_update", "toolCallId": "m", "_meta": {
        f"part{n}": "x" * (CUT_HEAD_BYTES + CUT_TAIL_BYTES) for n in range(8)}},
], ids=["auggie-sections", "vibe-json", "wrapped-command", "many-texts"])
def test_an_update_over_the_service_s_size_with_no_plain_output_to_cut_is_unpublishable(
        update: dict[str, Any]) -> None:
    why = encoded(update)
    assert isinstance(why, Unpublishable)
    assert why.reason.startswith("it is ")
    assert why.reason.endswith(f"bytes encoded, over the service's limit of {MAX_UPDATE_BYTES}"
                               ", even with its output fields cut")


def test_an_update_its_cut_would_record_differently_is_unpublishable() -> None:
    """Qwen's model text is no output, recognised by its sections: cut, it lost its
    `Error:` marker and would have been stored as output."""
    text = (f"Command: make\nDirectory: /repo\nOutput: {BIG_OUTPUT}\nError: "
            f"{'e' * CUT_TAIL_BYTES}\nExit Code: 2")
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "q", "status": "failed",
              "content": [{"type": "content", "content": {"type": "text", "text": text}}]}
    why = encoded(update, agent="qwen")
    assert isinstance(why, Unpublishable)
    assert why.reason.endswith("and its output cut would be recorded differently")


def test_each_update_is_published_as_the_value_it_was_converted_to_once() -> None:
    """The Value is made when the update arrives: a chunk waiting alone keeps the data it
    came with, chunks merged while they waited carry the tail of both."""
    sent: list[tuple[int, Any]] = []

    async def publish(sequence: int, update: struct_pb2.Value) -> bool:
        sent.append((sequence, json_format.MessageToDict(update)))
        return False

    async def forward() -> None:
        forwarder = Forwarder(BufferLimits())
        for update in (_say("a"), _chunk(b"one "), _chunk(b"two "), _chunk(b"three"),
                       _say("b"), _chunk(b"four")):
            forwarder.enqueue(update)
        forwarder.start(publish)
        await asyncio.wait_for(forwarder.flush(), 10)
        await forwarder.stop()

    asyncio.run(forward())
    assert sent == [(1, _say("a")), (2, _chunk(b"one two three")), (5, _say("b")),
                    (6, _chunk(b"four"))]

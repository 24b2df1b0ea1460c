"""Merging and cutting a terminal's waiting output chunks, and the bounded tail the bridge
keeps: the service's record of the merged or cut output is exactly its record of the whole
output, whatever is interleaved with it, and a terminal's waiting output stays bounded."""

from __future__ import annotations

import asyncio
import base64
import functools
import random
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2

from shellexec import normalize
from shellexec.api.convert import ValueBudget, python_value
from shellexec.bridge.coalescing import (
    TAIL_BYTES,
    Chunk,
    OutputTail,
    Waiting,
    WaitingUpdates,
    encoded_length,
    joined,
    merge_position,
    output_tail,
    read_chunk,
    with_data,
)
from shellexec.bridge.forwarder import BufferLimits, Forwarder
from shellexec.bridge.publishable import Encoded, encoded
from shellexec.client import to_protobuf_value
from shellexec.normalize import ShellRecord, bounded_head
from shellexec.normalize.terminal_updates import link_hint, terminal_refs
from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES
from shellexec.service.publishing import mask_context
from shellexec.service.terminals import masked_terminal_update

CALL = {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "make", "kind": "execute",
        "status": "in_progress"}


def _chunk_update(data: bytes, terminal: str = "t1", call: str | None = "c1"
                  ) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal,
                              "data": base64.b64encode(data).decode("ascii")}
    if call is not None:
        update["_meta"] = {"shellexec_tool_call_id": call}
    return update


def _chunk(data: bytes = b"x", terminal: str = "t1", call: str | None = "c1") -> Chunk:
    found = read_chunk(_chunk_update(data, terminal, call))
    assert found is not None
    return found


def _record(terminal_updates: list[dict[str, Any]]) -> ShellRecord:
    state = normalize.fold_all([CALL])
    for update in terminal_updates:
        state = normalize.fold(state, update)
    return normalize.shell_record(state)


@functools.cache
def _outputs() -> list[bytes]:
    rng = random.Random(7)
    text = "".join(rng.choice(["a", "é", "€", "𝄞", "\n"]) for _ in range(200_000)).encode()
    junk = bytes(rng.randrange(256) for _ in range(300_000))
    return [b"short\n", b"x" * (TAIL_BYTES + 1), text, junk, text + junk + text,
            b"\x80" * 400_000]


@pytest.mark.parametrize("output", _outputs(), ids=["short", "just-over", "utf8", "binary",
                                                    "mixed", "continuations"])
def test_the_tail_records_what_the_whole_output_records(output: bytes) -> None:
    reads = [output[i:i + 65_536] for i in range(0, len(output), 65_536)]
    whole = _record([_chunk_update(read) for read in reads])

    assert _record([_chunk_update(output_tail(output))]) == whole
    snapshot = {"sessionUpdate": "terminal_update", "terminalId": "t1",
                "output": {"data": base64.b64encode(output_tail(output)).decode("ascii")}}
    assert _record([snapshot]) == whole
    assert whole.output.truncated == (len(output) > MAX_OUTPUT_STREAM_BYTES)


@pytest.mark.parametrize("output", _outputs()[2:], ids=["utf8", "binary", "mixed",
                                                        "continuations"])
def test_merging_chunks_one_by_one_records_what_they_record(output: bytes) -> None:
    reads = [output[i:i + 65_536] for i in range(0, len(output), 65_536)]
    prefix = [_chunk_update(b"before\xe2\x82")]  # ends inside a character
    both = _chunk(reads[0])
    for read in reads[1:]:
        both = joined(both, _chunk(read))

    assert len(both.data) <= TAIL_BYTES
    update = json_format.MessageToDict(with_data(to_protobuf_value(_chunk_update(b"stale")),
                                                 both))
    assert _record([*prefix, update]) == _record(prefix + [_chunk_update(r) for r in reads])


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 65_536, TAIL_BYTES])
def test_the_encoded_length_is_base64_s(size: int) -> None:
    assert encoded_length(size) == len(base64.b64encode(b"x" * size))


def test_the_output_tail_keeps_the_newest_bytes() -> None:
    tail = OutputTail()
    for n in range(100):
        tail.append(bytes([n % 256]) * 10_000)
    assert tail.data() == output_tail(b"".join(bytes([n % 256]) * 10_000 for n in range(100)))
    assert len(tail.data()) == TAIL_BYTES


STORED = frozenset({"c1", "c2", "c3"})


def test_a_chunk_merges_into_the_newest_waiting_chunk_of_its_terminal() -> None:
    assert merge_position([_chunk()], _chunk(), STORED) == 0
    assert merge_position([], _chunk(), STORED) is None


def test_it_passes_chunks_of_terminals_that_name_other_calls() -> None:
    queued = [_chunk(terminal="t2", call="c2"), _chunk(terminal="t3", call="c3"), _chunk()]
    assert merge_position(queued, _chunk(), STORED) == 2


@pytest.mark.parametrize("between", [
    pytest.param(_chunk(terminal="t2", call="c1"), id="another-terminal-of-the-same-call"),
    pytest.param(_chunk(terminal="t2", call=None), id="another-terminal-naming-no-call"),
    pytest.param(None, id="any-other-update"),
])
def test_it_stops_at_an_update_whose_order_matters(between: Chunk | None) -> None:
    assert merge_position([between, _chunk()], _chunk(), STORED) is None


@pytest.mark.parametrize("stored", [frozenset({"c1"}), frozenset({"c2"})])
def test_it_stops_at_another_call_the_service_may_not_store_yet(stored: frozenset[str]
                                                                ) -> None:
    # Such a chunk goes where its terminal is linked, or is held and released later in
    # arrival order: maybe into the same call.
    queued = [_chunk(terminal="t2", call="c2"), _chunk()]
    assert merge_position(queued, _chunk(), stored) is None


def test_chunks_naming_no_call_merge_only_when_adjacent() -> None:
    mine = _chunk(call=None)
    assert merge_position([mine], _chunk(call=None), STORED) == 0
    assert merge_position([_chunk(terminal="t2", call="c2"), mine], _chunk(call=None),
                          STORED) is None


def test_a_chunk_of_its_terminal_for_another_call_is_never_merged_into() -> None:
    assert merge_position([_chunk(call="c2")], _chunk(call="c1"), STORED) is None


@pytest.mark.parametrize("update", [
    pytest.param({**_chunk_update(b"x"), "extra": 1}, id="another-field"),
    pytest.param({**_chunk_update(b"x"), "data": "not base64!"}, id="bad-base64"),
    pytest.param({**_chunk_update(b"x"), "terminalId": 7}, id="terminal-id-not-a-string"),
    pytest.param({"sessionUpdate": "terminal_update", "terminalId": "t1"}, id="not-a-chunk"),
])
def test_only_plain_chunks_are_mergeable(update: dict[str, Any]) -> None:
    assert read_chunk(update) is None


# -- waiting output: what the service stores is what it stores from every update ----------------
#
# `_Service` is what the service stores from a session's updates: each tool call's record, its
# terminals routed as `service/publishing.py` and `service/terminals.py` route them (links,
# `_meta` hints that name a stored call, held updates released in arrival order), folded by the
# pure fold; and the chat's messages. The same updates are then published through a real
# Forwarder whose publishes are let through a few at a time (an outage is a long stretch of
# none), and both must store the same.

TERMINALS = ("t1", "t2", "t3")
CALLS = ("c1", "c2", "c3")


class _Service:
    def __init__(self, mask_at_rest: bool = False) -> None:
        self.mask_at_rest = mask_at_rest
        self.calls: dict[str, normalize.ShellState] = {}
        self.messages: list[tuple[str, ...]] = []
        self._links: dict[str, str] = {}
        self._held: list[tuple[str, str | None, dict[str, Any]]] = []

    def publish(self, update: dict[str, Any]) -> None:
        kind = update["sessionUpdate"]
        if kind in ("tool_call", "tool_call_update"):
            self._tool(update)
        elif kind in ("agent_message_chunk", "user_message_chunk"):
            self._text(kind, update["content"]["text"])
        elif kind in ("terminal_update", "terminal_output_chunk"):
            self._terminal(update)

    def at_rest(self, call: str) -> str:
        """The call's stdout as the service keeps it (its record masks a cut head again on
        the way out, so it would not show what is stored)."""
        stdout = self.calls[call].stdout
        return "" if stdout is None else stdout.text

    def stored(self) -> tuple[object, ...]:
        records = {call: (normalize.shell_record(state), state.host_pending)
                   for call, state in self.calls.items()}
        return records, self.messages

    def _tool(self, update: dict[str, Any]) -> None:
        call = update["toolCallId"]
        named = [t for t in terminal_refs(update) if t not in self._links]
        if call not in self.calls:
            state, linked = self._release(normalize.fold(normalize.new_state(), update), named,
                                          new_call=call)
            self.messages.append(("tool", call))
        else:
            state = normalize.fold(self.calls[call], update)
            state, linked = self._release(state, named) if named else (state, [])
        self.calls[call] = state
        self._links.update(dict.fromkeys(linked, call))

    def _release(self, state: normalize.ShellState, terminals: list[str],
                 new_call: str | None = None) -> tuple[normalize.ShellState, list[str]]:
        linked = dict.fromkeys(terminals)
        for terminal, hint, _ in self._held:
            if new_call is not None and hint == new_call:
                linked.setdefault(terminal)
        kept = []
        for held in self._held:
            if held[0] in linked:
                state = normalize.fold(state, held[2])
            else:
                kept.append(held)
        self._held = kept
        return state, list(linked)

    def _terminal(self, update: dict[str, Any]) -> None:
        terminal, hint = update["terminalId"], link_hint(update)
        linked = self._links.get(terminal)
        just_linked = False
        if hint is not None and hint != linked and hint in self.calls:
            self._links[terminal], just_linked = hint, linked is None
        elif linked is None:
            held = masked_terminal_update(update, "") if self.mask_at_rest else update
            self._held.append((terminal, hint, held))
            return
        call = self._links[terminal]
        state = self.calls[call]
        if self.mask_at_rest:  # as the service masks it: with the end of the stream before it
            update = masked_terminal_update(update, mask_context(state))
        if just_linked:
            state, _ = self._release(state, [terminal])
        self.calls[call] = normalize.fold(state, update)

    def _text(self, kind: str, text: str) -> None:
        if not text:
            return
        if self.messages and self.messages[-1][:2] == ("text", kind):
            self.messages[-1] = ("text", kind, bounded_head(self.messages[-1][2] + text))
        else:
            self.messages.append(("text", kind, bounded_head(text)))


def _as_published(value: struct_pb2.Value) -> dict[str, Any]:
    published = python_value(value, "update", ValueBudget("update"))
    assert isinstance(published, dict)
    return published


def _stored_from_every_update(script: list[Any]) -> tuple[object, ...]:
    service = _Service()
    for step in script:
        if not isinstance(step, int):
            service.publish(_as_published(to_protobuf_value(step)))
    return service.stored()


async def _forwarded(script: list[Any], mask_at_rest: bool = False
                     ) -> tuple[_Service, Forwarder]:
    """`script`'s updates through a Forwarder into a `_Service`; a number n in it lets n
    publishes through (updates wait meanwhile, as in an outage); the rest at the end."""
    service = _Service(mask_at_rest)
    gate = asyncio.Semaphore(0)
    done = 0

    async def publish(sequence: int, value: struct_pb2.Value) -> bool:
        nonlocal done
        await gate.acquire()
        service.publish(_as_published(value))
        done += 1
        return False

    forwarder = Forwarder(BufferLimits())
    forwarder.start(publish)
    async with asyncio.timeout(60):
        for step in script:
            if isinstance(step, int):
                target = done + min(step, forwarder.pending)
                for _ in range(target - done):
                    gate.release()
                while done < target:
                    await asyncio.sleep(0)
            else:
                forwarder.enqueue(step)
        for _ in range(forwarder.pending):
            gate.release()
        await forwarder.flush()
    await forwarder.stop()
    return service, forwarder


def _stored_through_the_forwarder(script: list[Any]) -> tuple[object, ...]:
    return asyncio.run(_forwarded(script))[0].stored()


TOKEN = b"ghp_" + b"a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


# The token starts just before the cut, or further back, within LONGEST_CUT_TOKEN of it.
@pytest.mark.parametrize("before_token", [10, 15, 200])
def test_a_token_a_cut_starts_inside_is_masked_at_rest_as_every_update_would_be(
        before_token: int) -> None:
    """With masking at rest the service masks each chunk as it arrives and bounds the stream
    after. Cut at the bound, a waiting chunk began inside a token, which the service then did
    not recognise, and its rest was stored in clear: the bridge keeps LONGEST_CUT_TOKEN bytes
    more, which the service cuts off again."""
    rest = TAIL_BYTES + 20 - before_token - len(TOKEN)
    printed = b"a" * (before_token - 1) + b" " + TOKEN + b" " + b"z" * (rest - 1)
    script = [CALL, _chunk_update(b"first\n"), _say("working"), _chunk_update(printed)]
    every = _Service(mask_at_rest=True)
    for update in script:
        every.publish(_as_published(to_protobuf_value(update)))
    forwarded, _ = asyncio.run(_forwarded(script, mask_at_rest=True))
    assert forwarded.at_rest("c1") == every.at_rest("c1")
    assert TOKEN[8:16].decode() not in forwarded.at_rest("c1")


def _tool_call(call: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": call, "title": "make",
            "kind": "execute", "status": "in_progress", "rawInput": {"command": "make"},
            **fields}


def _names(terminal: str) -> list[dict[str, Any]]:
    return [{"type": "terminal", "terminalId": terminal}]


def _terminal_update(terminal: str, call: str | None = None, **fields: Any) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "terminal_update", "terminalId": terminal,
                              **fields}
    if call is not None:
        update["_meta"] = {"shellexec_tool_call_id": call}
    return update


def _weight(update: dict[str, Any]) -> int:
    """What `update` weighs in the buffer (`publishable.encoded`)."""
    weighed = encoded(update)
    assert isinstance(weighed, Encoded)
    return weighed.weight


def _say(text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def _printed(rng: random.Random, size: int) -> bytes:
    """Output of `size` bytes or so: text with characters of 1 to 4 bytes, split anywhere,
    and now and then bytes that are not UTF-8."""
    if rng.random() < 0.2:
        return rng.randbytes(size)
    text = "".join(rng.choice(["a", "b\n", "é", "€", "𝄞", "x" * 40])
                   for _ in range(max(size // 8, 1))).encode()
    start = rng.randrange(min(len(text), 4))
    return text[start:start + size]


def _random_script(seed: int) -> list[Any]:
    """Hosted terminals' shapes and worse: chunks of three terminals that name (or do not
    name) calls that may not be stored yet, interleaved with chat, ignored updates, tool
    updates that create calls or name terminals, terminal updates (exits, snapshots,
    clears, moves to another call), and publishes let through now and then. Half of the
    scripts announce calls first, as agents do, and their terminals mostly print."""
    rng = random.Random(seed)
    script: list[Any] = []
    if seed % 2:
        script += [_tool_call(call) for call in CALLS[:rng.randrange(1, 4)]]
        script.append(rng.choice([1, 2, 3]))
    hint: dict[str, str | None] = {t: rng.choice([*CALLS, "c1", "c1", None])
                                   for t in TERMINALS}
    printing = 0.5 if seed % 4 < 2 else 0.8
    outage = rng.random() < 0.5
    for _ in range(rng.randrange(20, 80)):
        roll = rng.random()
        terminal, call = rng.choice(TERMINALS), rng.choice(CALLS)
        fields: dict[str, Any]
        if roll < printing:
            large = rng.random() < 0.4
            data = _printed(rng, rng.randrange(50_000, 200_000) if large
                            else rng.randrange(1, 300))
            script.append(_chunk_update(data, terminal, hint[terminal]))
            roll = 0.0 if rng.random() < 0.8 else rng.random()
        if roll == 0.0:
            pass
        elif roll < 0.6:
            script.append(_say(rng.choice(["ok ", "", "done.\n"]),
                               rng.choice(["agent_message_chunk", "agent_message_chunk",
                                           "user_message_chunk"])))
        elif roll < 0.63:
            script.append({"sessionUpdate": "plan", "entries": []})
        elif roll < 0.7:
            fields = {"content": _names(terminal)} if rng.random() < 0.3 else {}
            script.append(_tool_call(call, **fields))
        elif roll < 0.78:
            update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call}
            choice = rng.randrange(4)
            if choice == 0:
                update["status"] = rng.choice(["completed", "failed"])
            elif choice == 1:
                update["content"] = _names(terminal)
            elif choice == 2:
                update["rawOutput"] = {"exit_code": rng.randrange(3), "stdout": "agent's"}
            else:
                update["content"] = [{"type": "content",
                                      "content": {"type": "text", "text": "a summary"}}]
            script.append(update)
        elif roll < 0.86:
            choice = rng.randrange(4)
            if choice == 0:
                fields = {"exitStatus": {"exitCode": rng.randrange(3), "signal": None}}
            elif choice == 1:
                snapshot = base64.b64encode(_printed(rng, rng.randrange(1, 3_000)))
                fields = {"output": {"data": snapshot.decode("ascii")}}
            elif choice == 2:
                fields = {"command": "make", "cwd": "/work"}
            else:
                fields = {"output": None, "exitStatus": None}
            script.append(_terminal_update(terminal, hint[terminal], **fields))
        elif roll < 0.9:
            # The bridge moves a terminal: it clears what it recorded into the first call,
            # then records a snapshot into the one that named it, and streams there.
            script.append(_terminal_update(terminal, hint[terminal], output=None,
                                           exitStatus=None))
            hint[terminal] = call
            snapshot = base64.b64encode(_printed(rng, rng.randrange(1, 3_000)))
            script.append(_terminal_update(terminal, call, command="make", cwd="/work",
                                           output={"data": snapshot.decode("ascii")}))
        if not outage or rng.random() < 0.05:
            script.append(rng.choice([0, 0, 1, 1, 2, 5]))
    return script


@pytest.mark.parametrize("seed", range(80))
def test_waiting_output_is_stored_as_every_update_would_be(seed: int) -> None:
    script = _random_script(seed)
    assert _stored_through_the_forwarder(script) == _stored_from_every_update(script)


def _two_terminals_of_one_call(rounds: int, size: int = 65_536) -> list[Any]:
    """D1: a call, published, then two terminals it runs printing in turn."""
    script: list[Any] = [_tool_call("c1"), 1,
                         _terminal_update("t1", "c1", command="yes b", cwd="/work"),
                         _terminal_update("t2", "c1", command="yes c", cwd="/work")]
    for n in range(rounds):
        script += [_chunk_update(bytes([97 + n % 26]) * size, "t1", "c1"),
                   _chunk_update(f"{n}".encode() * (size // 8), "t2", "c1")]
    return [*script, _terminal_update("t1", "c1", exitStatus={"exitCode": 0}),
            _terminal_update("t2", "c1", exitStatus={"exitCode": 1})]


def _a_terminal_and_the_agent(rounds: int) -> list[Any]:
    """D2: a call, published, its terminal printing while the agent writes to the chat."""
    script: list[Any] = [_tool_call("c1"), 1]
    for n in range(rounds):
        script += [_chunk_update(bytes([97 + n % 26]) * 65_536, "t1", "c1"),
                   _say(f"thinking {n} ")]
    return [*script, _terminal_update("t1", "c1", exitStatus={"exitCode": 0})]


@pytest.mark.parametrize("script", [
    pytest.param(_two_terminals_of_one_call(30), id="two-terminals-of-one-call"),
    pytest.param(_two_terminals_of_one_call(200, size=17), id="small-reads"),
    pytest.param(_a_terminal_and_the_agent(30), id="a-terminal-and-the-agent"),
    pytest.param([_chunk_update(b"x" * 100_000, "t1", "c1"), _tool_call("c1"),
                  *[_chunk_update(bytes([n]) * 100_000, t, "c1") for n in range(65, 75)
                    for t in ("t1", "t2")]], id="before-the-call-is-stored"),
    pytest.param([_tool_call("c1"), _tool_call("c2", content=_names("t2")), 2,
                  *[_chunk_update(bytes([n]) * 100_000, t, "c1") for n in range(65, 75)
                    for t in ("t1", "t2")]], id="a-terminal-linked-elsewhere"),
])
def test_the_shapes_of_the_probe_are_stored_as_every_update_would_be(script: list[Any]
                                                                     ) -> None:
    assert _stored_through_the_forwarder(script) == _stored_from_every_update(script)


def test_a_terminal_moved_to_another_call_keeps_its_order_there() -> None:
    script: list[Any] = [_tool_call("c1"), _tool_call("c2"), 2]
    for n in range(8):
        script.append(_chunk_update(bytes([65 + n]) * 100_000, "t1", "c1"))
        script.append(_chunk_update(bytes([97 + n]) * 100_000, "t2", "c1"))
    script += [_terminal_update("t1", "c1", output=None, exitStatus=None),
               _terminal_update("t1", "c2", command="make", cwd="/w",
                                output={"data": base64.b64encode(b"moved").decode()})]
    for n in range(8):
        script.append(_chunk_update(bytes([48 + n]) * 100_000, "t1", "c2"))
        script.append(_chunk_update(bytes([97 + n]) * 1_000, "t2", "c1"))
    stored = _stored_through_the_forwarder(script)
    assert stored == _stored_from_every_update(script)
    records = stored[0]
    assert isinstance(records, dict)
    assert records["c2"][0].output.stdout.endswith("7" * 100_000)


# -- the bound: a terminal's waiting output, whatever is interleaved with it ------------------


async def _in_an_outage(script: list[Any], limits: BufferLimits) -> Forwarder:
    """Enqueues `script`; a number n lets n publishes through, then none (the service went
    away: the one in flight never returns)."""
    let_through = 0

    async def publish(sequence: int, value: struct_pb2.Value) -> bool:
        nonlocal let_through
        while not let_through:
            await asyncio.sleep(0.01)
        let_through -= 1
        return False

    forwarder = Forwarder(limits)
    forwarder.start(publish)
    for step in script:
        if isinstance(step, int):
            let_through += step
            while let_through:
                await asyncio.sleep(0.01)
        else:
            forwarder.enqueue(step)
    await forwarder.stop()
    return forwarder


def _waiting_after(script: list[Any], limits: BufferLimits) -> Forwarder:
    return asyncio.run(_in_an_outage(script, limits))


SMALL = BufferLimits(max_bytes=4 * TAIL_BYTES)


def test_two_terminals_of_one_call_cannot_fill_the_buffer() -> None:
    # D1: 2 x 64 MB, each read 64 KiB; before, every read waited on its own.
    forwarder = _waiting_after(_two_terminals_of_one_call(1_000), SMALL)
    assert forwarder.failure is None
    # Each terminal's create and exit, its first chunk, and one holding the newest output.
    assert forwarder.pending <= 6


def test_two_terminals_of_one_call_reading_little_at_a_time_cannot_fill_it() -> None:
    forwarder = _waiting_after(_two_terminals_of_one_call(20_000, size=40),
                               BufferLimits(max_updates=100, max_bytes=4 * TAIL_BYTES))
    assert forwarder.failure is None
    assert forwarder.pending <= 6


def test_sixteen_terminals_of_one_call_cannot_fill_the_buffer() -> None:
    script: list[Any] = [_tool_call("c1"), 1]
    for n in range(100):
        script += [_chunk_update(bytes([65 + n % 26]) * 65_536, f"t{t}", "c1")
                   for t in range(16)]
    # Each terminal's first chunk waits where it came (it links the terminal); the others'
    # bytes join the newest waiting chunk.
    forwarder = _waiting_after(script, BufferLimits(max_updates=40,
                                                    max_bytes=16 * 90_000 + 2 * TAIL_BYTES))
    assert forwarder.failure is None
    assert forwarder.pending <= 17


def test_a_terminal_interleaved_with_the_agent_s_messages_cannot_fill_the_buffer() -> None:
    # D2: each message between two reads used to leave a merged chunk of 256 KiB waiting.
    forwarder = _waiting_after(_a_terminal_and_the_agent(1_000), BufferLimits(
        max_bytes=2 * 1_000 * _weight(_say("thinking 999 ")) + 2 * TAIL_BYTES))
    assert forwarder.failure is None
    # The messages and the exit; of the output, the newest TAIL_BYTES in five reads or so,
    # and the first chunk (being published) and the first one after it (emptied).
    assert forwarder.pending <= 1_000 + 1 + 7


def test_a_terminal_interleaved_with_other_calls_cannot_fill_the_buffer() -> None:
    script: list[Any] = [_tool_call("c1"), 1]
    for n in range(1_000):
        script += [_chunk_update(bytes([97 + n % 26]) * 65_536, "t1", "c1"),
                   {"sessionUpdate": "tool_call_update", "toolCallId": f"read-{n}",
                    "status": "completed"}]
    read = {"sessionUpdate": "tool_call_update", "toolCallId": "read-999", "status": "completed"}
    forwarder = _waiting_after(script, BufferLimits(
        max_bytes=2 * 1_000 * _weight(read) + 2 * TAIL_BYTES))
    assert forwarder.failure is None


def test_before_the_call_is_stored_a_terminal_s_output_is_bounded_still() -> None:
    # The call's own update is the one in flight: the chunks naming it may yet be held, so
    # only each terminal's own older output is cut.
    script: list[Any] = [_tool_call("c1")]
    for n in range(1_000):
        script += [_chunk_update(bytes([97 + n % 26]) * 65_536, t, "c1") for t in ("t1", "t2")]
    forwarder = _waiting_after(script, SMALL)
    assert forwarder.failure is None
    assert forwarder.pending <= 1 + 2 * (TAIL_BYTES // 65_536 + 2)


def _queued(waiting: WaitingUpdates, update: dict[str, Any], sequence: int) -> None:
    chunk = read_chunk(update)
    value = to_protobuf_value(update)
    item = Waiting(sequence, value, update["sessionUpdate"], value.ByteSize(), chunk,
                   tool_call=update.get("toolCallId"))
    if chunk is None:
        waiting.add(item, update)
    else:
        waiting.add_chunk(item)


@pytest.mark.parametrize(("shape", "terminals"), [
    pytest.param(_two_terminals_of_one_call(300), ("t1", "t2"), id="two-terminals"),
    pytest.param(_a_terminal_and_the_agent(300), ("t1",), id="the-agent-in-between"),
])
def test_a_terminal_s_waiting_output_is_the_newest_tail_bytes(
        shape: list[Any], terminals: tuple[str, ...]) -> None:
    waiting = WaitingUpdates()
    for sequence, update in enumerate(shape, 1):
        if isinstance(update, int):  # the call's update was published and stored
            head = waiting.head()
            assert head is not None
            waiting.published(head, stored=True)
        else:
            _queued(waiting, update, sequence)
        held = waiting.output_bytes()
        # The head (in flight) never changes: it may hold a read more.
        assert sum(held.values()) <= TAIL_BYTES + 65_536
    assert set(waiting.output_bytes()) <= set(terminals)


def _big(n: int, size: int = 100_000) -> bytes:
    return bytes([65 + n % 26]) * size


@pytest.mark.parametrize("script", [
    # t1 is linked to c9 by its content while its chunks name c1, which the service does
    # not store yet: they go into c9; once c1 is stored, they move there. The output of c9
    # is cut by nothing that went into c1.
    pytest.param([_tool_call("c9", content=_names("t1")),
                  *[_chunk_update(_big(n), "t1", "c1") for n in range(3)],
                  _tool_call("c1"),
                  *[_chunk_update(_big(n + 3), "t1", "c1") for n in range(3)]],
                 id="a-call-created-between-a-terminal-s-chunks"),
    # t1's exit was held (no call named it); its first chunk naming c1 links it and
    # releases that exit into c1 before t2's own exit: the chunk stays, even emptied.
    pytest.param([_terminal_update("t1", None, exitStatus={"exitCode": 1}),
                  _tool_call("c1"), 1,
                  _chunk_update(_big(0), "t1", "c1"),
                  _terminal_update("t2", "c1", exitStatus={"exitCode": 2}),
                  _say("still going"),
                  _chunk_update(_big(1, 300_000), "t1", "c1")],
                 id="the-chunk-that-links-a-terminal-stays"),
    # t1's first chunk naming c1 releases its held snapshot: a later chunk of t1 does not
    # join t2's waiting one unless an earlier chunk of t1 waits that will have linked it.
    pytest.param([_terminal_update("t1", None, output={"data": "aGVsZA=="}),
                  _tool_call("c1"), 1,
                  _chunk_update(b"t2 first\n", "t2", "c1"),
                  _chunk_update(b"t2 second\n", "t2", "c1"),
                  _chunk_update(b"t1 now\n", "t1", "c1")],
                 id="a-chunk-joins-another-terminal-s-only-once-linked"),
    # t1's chunks name c1, which the service does not store: they go where t1 is linked,
    # into c2, between t2's; they may not pass t2's chunk although it names another call.
    pytest.param([_tool_call("c2"), 1,
                  _chunk_update(b"t1 linked\n", "t1", "c2"),
                  _chunk_update(b"t1 one\n", "t1", "c1"),
                  _chunk_update(b"t2\n", "t2", "c2"),
                  _chunk_update(b"t1 two\n", "t1", "c1")],
                 id="a-call-not-stored-is-no-other-call"),
])
def test_what_links_or_moves_a_terminal_keeps_its_place(script: list[Any]) -> None:
    assert _stored_through_the_forwarder(script) == _stored_from_every_update(script)

"""Properties over arbitrary update sequences and arbitrary JSON in every field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellexec.normalize import (
    MAX_FIELD_BYTES,
    SHELL_STATUSES,
    Appended,
    OutputText,
    Replaced,
    ShellState,
    Unchanged,
    body_change,
    bound_tail,
    dump_state,
    fold,
    fold_all,
    load_state,
    shell_record,
    summarize,
)
from shellexec.normalize.text import to_utf8

pytestmark = pytest.mark.slow

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Text built from pieces that matter to the rules, plus any character (lone surrogates too).
PIECES = ["$ ", "ls -la", "\n", "\r\n", "```sh\n", "```", "é", "😀", "total 8", " ",
          "\n\nWall time: 0.01 seconds", "(no output)"]
MARKUP = ["<output>\n", "\n</output>", "<return-code>\n0\n</return-code>\n", "<stderr>\n"]
ANY_CHAR = st.characters(exclude_categories=())


def texts(pieces: list[str]) -> st.SearchStrategy[str]:
    small = st.lists(st.one_of(st.sampled_from(pieces), ANY_CHAR), max_size=8).map("".join)
    # Occasionally far past the bound, so truncation and multi-byte cuts get exercised.
    big = st.builds(lambda unit, times: unit * times, small.filter(bool),
                    st.integers(0, MAX_FIELD_BYTES // 3))
    return st.one_of(small, small, small, big)


JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts(PIECES),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8,
)

VALID_EXITS = st.one_of(st.integers(-(2**31), 2**31 - 1), st.sampled_from([0, 0.0, "0", "2"]))
INVALID_EXITS: st.SearchStrategy[Any] = st.sampled_from(
    [None, True, False, 1.5, float("nan"), float("inf"), 2**32, "x", "", "2.0", [], {}]
)


def updates(text: st.SearchStrategy[str], exits: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Tool-call updates with realistic keys, each holding a realistic or an arbitrary value."""

    def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(strategy, strategy, JSON)

    block = st.one_of(
        st.builds(lambda t: {"type": "content", "content": {"type": "text", "text": t}}, text),
        st.builds(lambda t: {"type": "text", "text": t}, text),
        st.just({"type": "terminal", "terminalId": "t"}),
    )
    raw_output = st.one_of(
        text,
        st.lists(st.builds(lambda t: {"type": "text", "text": t}, text), max_size=2),
        st.fixed_dictionaries({}, optional={
            "formatted_output": text, "aggregated_output": text, "stdout": text, "stderr": text,
            "output": text, "exit_code": exits, "metadata": maybe(st.fixed_dictionaries(
                {}, optional={"exit": exits, "output": text})),
            "details": maybe(st.fixed_dictionaries({}, optional={"exitCode": exits})),
            "content": st.lists(block, max_size=2),
        }),
    )
    meta = st.fixed_dictionaries({}, optional={
        "terminal_output_delta": maybe(st.one_of(text, st.builds(lambda t: {"data": t}, text))),
        "terminal_output": maybe(st.one_of(text, st.builds(lambda t: {"data": t}, text))),
        "terminal_exit": maybe(st.fixed_dictionaries({"exit_code": exits})),
        "terminal_info": maybe(st.fixed_dictionaries({}, optional={"cwd": text})),
    })
    raw_input = st.fixed_dictionaries({}, optional={
        "command": st.one_of(text, st.lists(text, max_size=4),
                             st.just(["/bin/bash", "-lc", "ls -la"])),
        "cwd": text, "workdir": text, "description": text, "parsed_cmd": JSON,
    })
    return st.fixed_dictionaries(
        {"sessionUpdate": st.sampled_from(["tool_call", "tool_call_update", "tool_call_update",
                                           "agent_message_chunk"])},
        optional={
            "toolCallId": maybe(st.just("call_1")),
            "status": maybe(st.sampled_from(["pending", "in_progress", "completed", "failed",
                                             "cancelled", "paused"])),
            "kind": maybe(st.sampled_from(["execute", "search", "read", "other"])),
            "name": maybe(st.sampled_from(["exec_command", "Bash"])),
            "title": maybe(text),
            "rawInput": maybe(raw_input),
            "content": maybe(st.lists(block, max_size=3)),
            "rawOutput": maybe(raw_output),
            "_meta": maybe(meta),
        },
    )


UPDATES = updates(texts(PIECES + MARKUP), st.one_of(VALID_EXITS, INVALID_EXITS, JSON))
SEQUENCES = st.lists(st.one_of(UPDATES, UPDATES, UPDATES, JSON), max_size=8)
AGENTS = st.sampled_from([None, "codex", "claude", "opencode", "auggie", "omp", ""])


def _utf8_within_bound(text: str | None) -> bool:
    """Encoding fails on a lone surrogate, so this also checks the text is valid UTF-8."""
    return text is None or len(text.encode("utf-8")) <= MAX_FIELD_BYTES


def _restored(state: ShellState) -> ShellState:
    record = json.loads(json.dumps(dump_state(state)))
    return load_state(record, *(None if s is None else s.text for s in (state.stdout,
                                                                         state.stderr)))


@SETTINGS
@given(st.lists(JSON, max_size=6), AGENTS)
def test_fold_never_raises_on_arbitrary_json(values: list[Any], agent: str | None) -> None:
    assert shell_record(fold_all(values, agent=agent)).status in SHELL_STATUSES


@SETTINGS
@given(SEQUENCES, AGENTS)
def test_fields_are_valid_utf8_within_the_bound_and_the_view_is_consistent(
    sequence: list[Any], agent: str | None
) -> None:
    state = fold_all(sequence, agent=agent)
    shown = shell_record(state)
    assert _utf8_within_bound(shown.output.stdout)
    assert _utf8_within_bound(shown.output.stderr)
    for text in (shown.command, shown.work_dir, shown.title, shown.description):
        assert text is None or text.encode("utf-8")  # no lone surrogate survives
    assert state.summary() == summarize(shown.output)
    assert shown.output.truncated == bool(
        (state.stdout and state.stdout.truncated) or (state.stderr and state.stderr.truncated))


@SETTINGS
@given(st.lists(updates(texts(PIECES), INVALID_EXITS), max_size=8))
def test_absent_or_invalid_exit_is_never_zero(sequence: list[Any]) -> None:
    shown = shell_record(fold_all(sequence))
    assert shown.output.exit_code is None
    assert shown.result != "success"


@SETTINGS
@given(SEQUENCES, AGENTS)
def test_fold_is_deterministic(sequence: list[Any], agent: str | None) -> None:
    first = fold_all(sequence, agent=agent)
    second = fold_all(json.loads(json.dumps(sequence)), agent=agent) if _json_safe(
        sequence) else fold_all(sequence, agent=agent)
    assert first == second
    assert shell_record(first) == shell_record(second)


def _json_safe(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


@SETTINGS
@given(SEQUENCES, UPDATES)
def test_replaying_the_same_cumulative_frame_changes_nothing(
    sequence: list[Any], frame: Any
) -> None:
    if isinstance(frame, dict):
        frame = {key: value for key, value in frame.items() if key != "_meta"}
    once = fold(fold_all(sequence), frame)
    assert fold(once, frame) == once


@SETTINGS
@given(SEQUENCES, SEQUENCES, AGENTS)
def test_restored_state_resumes_the_fold_identically(
    first: list[Any], second: list[Any], agent: str | None
) -> None:
    whole = fold_all(first + second, agent=agent)
    resumed = fold_all(second, state=_restored(fold_all(first, agent=agent)))
    assert shell_record(resumed) == shell_record(whole)
    assert resumed == whole


@SETTINGS
@given(SEQUENCES, UPDATES)
def test_body_change_applied_to_the_old_text_gives_the_new_text(
    sequence: list[Any], update: Any
) -> None:
    before = fold_all(sequence)
    after = fold(before, update)
    for old, new in ((before.stdout, after.stdout), (before.stderr, after.stderr)):
        change = body_change(old, new)
        if isinstance(change, Unchanged):
            assert (None if old is None else old.text) == (None if new is None else new.text)
        elif isinstance(change, Appended):
            assert old is not None
            assert new is not None
            assert bound_tail(old.text + change.text)[0] == new.text
        else:
            assert isinstance(change, Replaced)
            assert change.text == (None if new is None else new.text)


OPERATIONS = st.lists(
    st.tuples(st.integers(0, 20), st.one_of(st.just(None), texts(PIECES))), max_size=25
)


@SETTINGS
@given(texts(PIECES), OPERATIONS)
def test_output_text_matches_a_naive_bounded_string(first: str, operations: list[Any]) -> None:
    """Appends to any earlier version (branching included) behave like string concatenation."""
    versions = [(OutputText.of(first), first)]
    for pick, delta in operations:
        stream, model = versions[pick % len(versions)]
        if delta is None:
            versions.append((OutputText.of(model), model))
        else:
            versions.append((stream.append(delta), model + delta))
    for stream, model in versions:
        expected, cut = bound_tail(model)
        assert stream.text == expected
        assert stream.byte_count == len(expected.encode("utf-8"))
        assert stream.total_bytes == len(to_utf8(model)[1])
        assert stream.truncated == cut

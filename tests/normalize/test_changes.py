"""body_change: what the store must write after a fold."""

from __future__ import annotations

from shellexec.normalize import (
    MAX_FIELD_BYTES,
    Appended,
    OutputText,
    Replaced,
    Unchanged,
    body_change,
    bound_tail,
)


def test_same_stream_is_unchanged() -> None:
    stream = OutputText.of("a")
    assert body_change(stream, stream) == Unchanged()
    assert body_change(None, None) == Unchanged()
    assert body_change(stream, OutputText.of("a")) == Unchanged()


def test_new_stream_is_replaced_with_its_text() -> None:
    assert body_change(None, OutputText.of("")) == Replaced("")
    assert body_change(None, OutputText.of("a")) == Replaced("a")


def test_removed_stream_is_replaced_with_none() -> None:
    assert body_change(OutputText.of("a"), None) == Replaced(None)


def test_appends_are_reported_as_the_appended_text_only() -> None:
    before = OutputText.of("a")
    assert body_change(before, before.append("b").append("c")) == Appended("bc")


def test_append_past_the_bound_is_still_an_append_that_bound_tail_resolves() -> None:
    before = OutputText.of("é" * (MAX_FIELD_BYTES // 2))
    after = before.append("ü!")
    change = body_change(before, after)
    assert isinstance(change, Appended)
    assert bound_tail(before.text + change.text)[0] == after.text


def test_replacement_with_other_text_is_replaced() -> None:
    assert body_change(OutputText.of("abc"), OutputText.of("abd")) == Replaced("abd")


def test_append_cost_does_not_depend_on_the_held_text() -> None:
    # appended_since only joins the new chunks: the held 200 KiB are never read.
    before = OutputText.of("")
    for _ in range(200):
        before = before.append("z" * 1024)
    after = before.append("new")
    assert before._text is None
    assert body_change(before, after) == Appended("new")
    assert before._text is None
    assert after._text is None


def test_an_append_that_rewrites_the_buffer_is_still_an_append() -> None:
    stream = OutputText.of("")
    delta = "y" * 4095 + "\n"
    for _ in range(2 * MAX_FIELD_BYTES // len(delta)):  # up to the buffer's rewrite
        stream = stream.append(delta)
    last = stream.append(delta)  # past twice the bound: this version rewrote its buffer
    assert body_change(stream, last) == Appended(delta)
    assert bound_tail(stream.text + delta)[0] == last.text
    assert body_change(stream, last.append("z")) == Replaced(last.append("z").text)

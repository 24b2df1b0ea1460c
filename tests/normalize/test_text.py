"""The bound, UTF-8 validity and the cost model of OutputText."""

from __future__ import annotations

import pytest

from shellexec.normalize import MAX_FIELD_BYTES, OutputText, bound_tail, bounded_head
from shellexec.normalize.text import to_utf8


def test_bound_tail_keeps_text_within_the_bound_untouched() -> None:
    text = "a" * MAX_FIELD_BYTES
    assert bound_tail(text) == (text, False)


def test_bound_tail_keeps_the_newest_bytes() -> None:
    kept, truncated = bound_tail("old" + "n" * MAX_FIELD_BYTES)
    assert truncated
    assert kept == "n" * MAX_FIELD_BYTES


def test_bounded_head_keeps_text_within_the_bound_untouched() -> None:
    text = "é" * (MAX_FIELD_BYTES // 2)
    assert bounded_head(text) is text


def test_bounded_head_keeps_the_oldest_bytes() -> None:
    assert bounded_head("old" + "n" * MAX_FIELD_BYTES) == "old" + "n" * (MAX_FIELD_BYTES - 3)


@pytest.mark.parametrize("char", ["é", "€", "😀"])
def test_bounded_head_cuts_on_a_character_boundary_inside_a_multibyte_character(
        char: str) -> None:
    width = len(char.encode())
    kept = bounded_head("a" + char * (MAX_FIELD_BYTES // width))
    assert set(kept[1:]) == {char}
    assert MAX_FIELD_BYTES - width < len(kept.encode()) <= MAX_FIELD_BYTES


@pytest.mark.parametrize("char", ["é", "€", "😀"])
def test_bound_tail_cuts_on_a_character_boundary_inside_a_multibyte_character(char: str) -> None:
    width = len(char.encode())
    text = char * (MAX_FIELD_BYTES // width + 1)
    kept, truncated = bound_tail(text)
    assert truncated
    assert set(kept) == {char}
    assert MAX_FIELD_BYTES - width < len(kept.encode()) <= MAX_FIELD_BYTES


def test_bound_tail_replaces_lone_surrogates_with_replacement_character() -> None:
    assert bound_tail("a\ud800b\udfff") == ("a\ufffdb\ufffd", False)


def test_to_utf8_keeps_valid_text_as_is() -> None:
    text = "héllo 😀"
    clean, data = to_utf8(text)
    assert clean is text
    assert data == text.encode()


def test_output_text_of_reports_exact_byte_count_and_no_truncation() -> None:
    stream = OutputText.of("héllo")
    assert (stream.text, stream.byte_count, stream.truncated, stream.total_bytes) == (
        "héllo", 6, False, 6
    )


def test_output_text_empty_is_present_and_empty() -> None:
    stream = OutputText.of("")
    assert (stream.text, stream.byte_count, stream.truncated) == ("", 0, False)


def test_output_text_append_leaves_the_previous_version_unchanged() -> None:
    first = OutputText.of("a")
    second = first.append("b")
    third = second.append("c")
    assert (first.text, second.text, third.text) == ("a", "ab", "abc")
    assert third.byte_count == 3


def test_output_text_appending_to_an_older_version_branches_without_corrupting_either() -> None:
    base = OutputText.of("base:")
    left = base.append("left")
    right = base.append("right")
    assert (base.text, left.text, right.text) == ("base:", "base:left", "base:right")
    assert left.append("!").text == "base:left!"
    assert right.append("?").text == "base:right?"


def test_output_text_append_past_the_bound_keeps_newest_and_counts_exactly() -> None:
    stream = OutputText.of("")
    chunk = "ü" * 700 + "\n"  # 1401 bytes: cuts land inside characters
    for _ in range(400):
        stream = stream.append(chunk)
    expected, truncated = bound_tail(chunk * 400)
    assert truncated
    assert stream.truncated
    assert stream.text == expected
    assert stream.byte_count == len(expected.encode())
    assert stream.total_bytes == len(chunk.encode()) * 400


def test_output_text_delta_larger_than_the_bound_alone_fills_it() -> None:
    stream = OutputText.of("old").append("€" * MAX_FIELD_BYTES)
    assert stream.truncated
    assert set(stream.text) == {"€"}
    assert stream.byte_count <= MAX_FIELD_BYTES


def test_output_text_many_tiny_deltas_read_back_exactly() -> None:
    stream = OutputText.of("")
    for index in range(10_000):
        stream = stream.append(str(index % 10))
    assert stream.text == "".join(str(index % 10) for index in range(10_000))


def test_output_text_append_replaces_lone_surrogates() -> None:
    assert OutputText.of("a").append("\udc80").text == "a\ufffd"


def test_output_text_equality_is_by_text_truncation_and_total() -> None:
    assert OutputText.of("ab") == OutputText.of("a").append("b")
    assert OutputText.of("ab") != OutputText.of("ab", truncated=True)
    assert OutputText.of("ab") != OutputText.of("ab", total_bytes=10)
    assert hash(OutputText.of("ab")) == hash(OutputText.of("a").append("b"))


def test_output_text_is_not_equal_to_a_plain_string_and_has_a_short_repr() -> None:
    stream = OutputText.of("x" * 100)
    assert stream != "x" * 100
    assert repr(stream) == f"OutputText({'x' * 40 + '...'!r}, bytes=100, truncated=False)"


def test_output_text_of_restores_truncation_and_total_from_storage() -> None:
    stream = OutputText.of("tail", truncated=True, total_bytes=1000)
    assert (stream.text, stream.truncated, stream.total_bytes) == ("tail", True, 1000)


def test_appended_since_tells_what_was_appended() -> None:
    before = OutputText.of("a")
    after = before.append("b").append("c")
    assert after.appended_since(before) == "bc"
    assert before.appended_since(after) is None
    assert OutputText.of("abc").appended_since(before) is None


@pytest.mark.parametrize(
    ("snapshot", "extension"),
    [("abc", ""), ("abcdef", "def"), ("xabc", None), ("ab", None), ("abd", None)],
)
def test_extension_of_a_snapshot_is_what_it_adds(snapshot: str, extension: str | None) -> None:
    assert OutputText.of("abc").extension_of(snapshot) == extension


def test_extension_of_a_truncated_stream_compares_the_retained_tail_at_its_offset() -> None:
    full = "0123456789" * (MAX_FIELD_BYTES // 10 + 100)
    stream = OutputText.of(full)
    assert stream.truncated
    assert stream.extension_of(full + "more") == "more"
    assert stream.extension_of("X" + full[1:] + "more") == "more"  # the cut part is not seen
    assert stream.extension_of(full[:-1] + "X" + "more") is None


def test_tail_gives_the_newest_bytes_without_a_cut_character() -> None:
    stream = OutputText.of("old ").append("é€").append("new")
    assert stream.tail(4) == "new"  # the fourth byte from the end is inside "€"
    assert stream.tail(6) == "€new"
    assert stream.tail(100) == "old é€new"
    assert OutputText.of("日本語").tail(4) == "語"
    assert OutputText.of("").tail(10) == ""

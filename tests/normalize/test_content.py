"""Cumulative `content[]` text: fences, description echoes, duplicate blocks."""

from __future__ import annotations

from typing import Any

import pytest

from shellexec.normalize.content import content_output, strip_fence


def _text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("```sh\ntotal 8\n```\n", "total 8"),
        ("```sh\na\nb\n```", "a\nb"),
        ("```console\nok\n```", "ok"),
        ("```\nExit code 2\nboom\n```", "Exit code 2\nboom"),
        ("````md\n```inner```\n````\n", "```inner```"),
        ("```sh\n```\n", ""),
        ("plain text", "plain text"),
        ("```sh\nunclosed\n", "```sh\nunclosed\n"),
        ("```sh\nclosing on the same line```", "```sh\nclosing on the same line```"),
        ("text before\n```sh\nx\n```", "text before\n```sh\nx\n```"),
    ],
)
def test_strip_fence_removes_only_a_fence_wrapping_the_whole_block(text: str, body: str) -> None:
    assert strip_fence(text) == body


def test_content_without_text_blocks_shows_no_output() -> None:
    assert content_output([], None) is None
    assert content_output([{"type": "terminal", "terminalId": "t"}], None) is None
    assert content_output([{"type": "diff", "path": "/a", "newText": "x"}], None) is None
    assert content_output("text", None) is None
    assert content_output(None, None) is None


def test_description_block_is_not_output() -> None:
    blocks = [_text("List files in /tmp")]
    assert content_output(blocks, "List files in /tmp") is None


def test_raw_and_trimmed_copies_of_the_same_output_appear_once() -> None:
    blocks = [_text("$ ls"), _text("a\nb\n"), _text("a\nb")]
    assert content_output(blocks, None) == "$ ls\na\nb\n"


def test_bare_text_blocks_are_read_too() -> None:
    assert content_output([{"type": "text", "text": "x"}], None) == "x"


def test_distinct_blocks_are_joined_with_a_line_break() -> None:
    assert content_output([_text("one"), _text("two\n"), _text("three")], None) == (
        "one\ntwo\nthree"
    )

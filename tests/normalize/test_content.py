"""Cumulative `content[]` text: fences, description echoes, duplicate blocks."""

from __future__ import annotations

from typing import Any

import pytest

from shellexec.normalize.content import content_output, strip_fence
from shellexec.vocabulary import AgentName


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


@pytest.mark.parametrize("agent", ["codex", "claude", "auggie", None])
def test_agents_that_present_their_output_lose_its_fence_and_description(
        agent: AgentName | None) -> None:
    assert content_output([_text("```console\nok\n```")], None, agent) == "ok"
    assert content_output([_text("1.2.3")], "1.2.3", agent) is None


@pytest.mark.parametrize("agent", ["gemini", "kimi", "copilot", "grok", "opencode", "omp"])
def test_other_agents_content_is_what_the_command_printed(agent: AgentName) -> None:
    """`cat INSTALL.md` through Gemini lost the file's fence lines, and Copilot's output equal
    to its description was dropped: only Codex, Claude and Auggie present their output."""
    fenced_file = "```sh\nmake install\n```\n"
    assert content_output([_text(fenced_file)], None, agent) == fenced_file
    assert content_output([_text("1.2.3")], "1.2.3", agent) == "1.2.3"

"""The `$ <command>` presentation line is removed from the body exactly once."""

from __future__ import annotations

from typing import Any

import pytest

from shellexec.normalize import commands, echo, fold, fold_all, load_state, shell_record
from shellexec.normalize.echo import presentation_line, strip_presentation

LINE = "$ ls -la"


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("$ ls -la\ntotal 8\n", "total 8\n"),
        ("$ ls -la\r\ntotal 8\r\n", "total 8\r\n"),
        ("$ ls -latotal 8\n", "total 8\n"),
        ("$ ls -la", ""),
        ("$ ls -la\n", ""),
        ("$ ls -la\n$ ls -la\nreal\n", "$ ls -la\nreal\n"),
        ("ls -la output\n", "ls -la output\n"),
        ("total 8\n$ ls -la\n", "total 8\n$ ls -la\n"),
        (" $ ls -la\nx", " $ ls -la\nx"),
        ("$ ls -l\n", "$ ls -l\n"),
    ],
)
def test_presentation_line_is_stripped_once_and_only_at_the_head(text: str, body: str) -> None:
    assert strip_presentation(text, LINE)[0] == body


def test_multi_line_command_echo_matches_lf_and_crlf() -> None:
    line = presentation_line("for i in 1 2\ndo echo $i\ndone", None)
    assert strip_presentation("$ for i in 1 2\ndo echo $i\ndone\n1\n2\n", line)[0] == "1\n2\n"
    assert strip_presentation("$ for i in 1 2\r\ndo echo $i\r\ndone\r\n1\r\n", line)[0] == "1\r\n"


def test_multi_line_echo_needs_its_line_breaks() -> None:
    line = presentation_line("a\nb", None)
    assert strip_presentation("$ ab\n", line) == ("$ ab\n", False)


def test_echo_is_not_looked_for_in_a_chunk_appended_to_restored_text() -> None:
    restored = load_state({"command": "ls -la", "echo": "pending"}, "earlier\n", None)
    state = fold(restored, {"sessionUpdate": "tool_call_update",
                            "_meta": {"terminal_output_delta": "$ ls -la\n"}})
    assert shell_record(state).output.stdout == "earlier\n$ ls -la\n"


def test_presentation_line_comes_from_the_command_else_a_dollar_title() -> None:
    assert presentation_line("  ls  ", "$ other") == "$ ls"
    assert presentation_line(None, "$ ls -la") == "$ ls -la"
    assert presentation_line(None, "Run `ls`") is None
    assert presentation_line(None, None) is None


def _omp(*updates: dict[str, Any], command: str = "ls -la") -> list[dict[str, Any]]:
    start = {"sessionUpdate": "tool_call", "toolCallId": "o", "title": f"$ {command}",
             "kind": "execute", "status": "pending", "rawInput": {"command": command},
             "content": [_text(f"$ {command}")]}
    tail = ({"sessionUpdate": "tool_call_update", "toolCallId": "o", **u} for u in updates)
    return [start, *tail]


def _text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def test_echo_block_alone_is_not_output() -> None:
    assert shell_record(fold_all(_omp())).output.stdout is None


def test_glued_echo_in_cumulative_content_is_removed() -> None:
    state = fold_all(_omp({"status": "in_progress", "content": [_text("$ ls -latotal 8\n")]}))
    assert shell_record(state).output.stdout == "total 8\n"


def test_real_output_repeating_the_echo_is_kept_after_the_single_strip() -> None:
    state = fold_all(_omp({"status": "completed",
                           "content": [_text("$ ls -la"), _text("$ ls -la is what ran\n")]}))
    assert shell_record(state).output.stdout == "$ ls -la is what ran\n"


def test_structured_final_without_stdout_field_keeps_the_stripped_content() -> None:
    state = fold_all(_omp(
        {"status": "in_progress", "content": [_text("$ ls -la"), _text("total 8\n")]},
        {"status": "completed", "content": [_text("$ ls -la"), _text("total 8\n")],
         "rawOutput": {"details": {"wallTimeMs": 1.0}, "isError": False}},
    ))
    assert shell_record(state).output.stdout == "total 8\n"


def test_final_raw_output_text_starting_with_the_echo_is_stripped_too() -> None:
    state = fold_all(_omp({"status": "completed", "rawOutput": "$ ls -la\ntotal 8\n"}))
    assert shell_record(state).output.stdout == "total 8\n"


def test_echo_in_the_first_chunk_of_a_terminal_stream_is_removed_once() -> None:
    state = fold_all(_omp(
        {"_meta": {"terminal_output_delta": "$ ls -la\r\ntotal 8\r\n"}},
        {"_meta": {"terminal_output_delta": "$ ls -la\r\n"}},
    ))
    assert shell_record(state).output.stdout == "total 8\r\n$ ls -la\r\n"


def test_echo_chunk_followed_by_its_line_break_in_the_next_chunk() -> None:
    state = fold_all(_omp(
        {"_meta": {"terminal_output_delta": "$ ls -la"}},
        {"_meta": {"terminal_output_delta": "\ntotal 8\n"}},
        {"_meta": {"terminal_output_delta": "\nmore\n"}},
    ))
    assert shell_record(state).output.stdout == "total 8\n\nmore\n"


@pytest.mark.parametrize("command", ["bash -c 'cd src && ls'", "/bin/bash -lc \"make 'all'\""])
def test_the_echo_of_a_wrapped_command_is_removed_as_the_agent_sent_it(command: str) -> None:
    """OMP echoes `$ ` and the command as sent; the record shows the wrapper's script."""
    live = fold_all(_omp({"status": "in_progress",
                          "content": [_text(f"$ {command}"), _text("a.txt\n")]},
                         command=command))
    assert shell_record(live).output.stdout == "a.txt\n"
    glued = fold_all(_omp({"status": "completed", "content": [_text(f"$ {command}a.txt\n")],
                           "rawOutput": {"details": {"timeoutSeconds": 300}}},
                          command=command))
    assert shell_record(glued).command != command
    assert shell_record(glued).output.stdout == "a.txt\n"


def test_a_dollar_title_is_the_echo_only_of_the_command_shown() -> None:
    assert presentation_line("cd src", "$ bash -c 'cd src'") == "$ bash -c 'cd src'"
    assert presentation_line("cd src", "$ bash -c 'cd lib'") == "$ cd src"
    assert presentation_line("cd src", "$ cd src") == "$ cd src"


def test_a_title_is_unwrapped_only_when_short_and_holding_the_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each update of a call looks for its echo: unwrapping a title of megabytes on each cost
    0.4 s per update (a Normalize of 50 small updates took 19 s)."""
    unwrapped: list[str] = []
    unwrap = commands.command_of

    def counted(raw_input: dict[str, str]) -> str | None:
        unwrapped.append(raw_input["command"])
        return unwrap(raw_input)

    monkeypatch.setattr(echo, "command_of", counted)
    long_title = "$ bash -c '" + "x" * echo.MAX_WRAPPER_TITLE_CHARS + "'"
    assert presentation_line("x" * echo.MAX_WRAPPER_TITLE_CHARS, long_title) == (
        "$ " + "x" * echo.MAX_WRAPPER_TITLE_CHARS)
    assert presentation_line("ls", "$ bash -c " + "''" * 3000) == "$ ls"
    assert unwrapped == []
    assert presentation_line("ls", "$ bash -c 'ls'") == "$ bash -c 'ls'"
    assert unwrapped == ["bash -c 'ls'"]


def test_output_that_merely_starts_with_the_command_text_is_kept() -> None:
    state = fold_all(_omp({"status": "completed", "rawOutput": "ls -la: listing\n"}))
    assert shell_record(state).output.stdout == "ls -la: listing\n"

"""Shell detection, the command shown, its directory and description."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shellexec.normalize import fold_all, shell_record
from shellexec.normalize.commands import command_of, shell_signal, shell_words, work_dir_of


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["/bin/bash", "-lc", "ls -la"], "ls -la"),
        (["bash", "-c", "echo hi && ls"], "echo hi && ls"),
        (["/usr/bin/zsh", "-lc", "git status"], "git status"),
        (["/bin/sh", "-c", "make"], "make"),
        (["dash", "-ic", "pwd"], "pwd"),
        (["/bin/bash", "--login", "-c", "pwd"], "pwd"),
        (["/bin/bash", "-lic", "pwd"], "pwd"),
        (["C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", "-NoProfile",
          "-Command", "Get-ChildItem"], "Get-ChildItem"),
        (["pwsh", "-c", "ls"], "ls"),
        (["cmd.exe", "/c", "dir"], "dir"),
        (["ls", "-la", "/tmp"], "ls -la /tmp"),
        (["grep", "-r", "two words", "."], "grep -r 'two words' ."),
        (["bash", "-c", "echo $0", "name"], "bash -c 'echo $0' name"),
        (["bash", "script.sh"], "bash script.sh"),
        (["bash", "-lc", ""], "bash -lc ''"),
        (["python3", "-c", "print(1)"], "python3 -c 'print(1)'"),
        (["bash", "-o", "pipefail", "-c", "x"], "bash -o pipefail -c x"),
        (["bash", "-l", "-e"], "bash -l -e"),
        # An option of many `c`s and then no letter: once a search that cost the square of
        # its length (about three minutes at this size).
        (["bash", "-" + "c" * 100_000 + "1", "x"], "bash -" + "c" * 100_000 + "1 x"),
    ],
)
def test_argv_command_shows_the_inner_shell_script_or_a_quoted_join(
    argv: list[str], shown: str
) -> None:
    assert command_of({"command": argv}) == shown


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("/bin/bash -lc 'cd src && make test'", "cd src && make test"),
        ('bash -c "echo \\"quoted\\""', 'echo "quoted"'),
        ("/bin/zsh -lc 'unbalanced", "/bin/zsh -lc 'unbalanced"),
        ("make test", "make test"),
        ("bash build.sh", "bash build.sh"),
        ("  ls  ", "  ls  "),
        ("bash -c 'a'\\''b'", "a'b"),
        ('bash -lc "x\\\\\\"y\\z"', 'x\\"y\\z'),
        ("bash -c \\$HOME", "$HOME"),
        ("bash -c ''", "bash -c ''"),
        ("bash -c 'one' two", "bash -c 'one' two"),
        ("bash -c 'trailing escape' \\", "bash -c 'trailing escape' \\"),
        ("bash -l -c 'set -e\nmake'", "set -e\nmake"),
        # A script of a quarter of a million words is one word of the wrapper.
        ("bash -c '" + "x " * 250_000 + "'", "x " * 250_000),
    ],
)
def test_string_command_is_unwrapped_only_when_it_is_a_shell_wrapper(
    command: str, shown: str
) -> None:
    assert command_of({"command": command}) == shown


@pytest.mark.parametrize(
    "raw_input",
    [{}, {"command": ""}, {"command": "   "}, {"command": []}, {"command": ["ls", 1]},
     {"command": None}, {"command": {"argv": ["ls"]}}, "ls", None],
)
def test_missing_or_malformed_command_is_none(raw_input: object) -> None:
    assert command_of(raw_input) is None


@pytest.mark.parametrize("kind", ["execute", "EXECUTE", "bash", "Run", "shell", " execute "])
def test_shell_kinds_in_any_case_are_shell(kind: str) -> None:
    assert shell_signal({"kind": kind})


def test_codex_read_only_command_reported_as_search_is_still_shell() -> None:
    assert shell_signal({"kind": "search", "rawInput": {"command": ["/bin/bash", "-lc", "ls"]}})
    assert shell_signal({"kind": "read", "rawInput": {"parsed_cmd": []}})


def test_terminal_info_and_shell_tool_names_are_shell() -> None:
    assert shell_signal({"kind": "other", "_meta": {"terminal_info": {"terminal_id": "t"}}})
    assert shell_signal({"name": "exec_command"})
    assert shell_signal({"name": "Bash"})


CODEX_END_EVENT = {
    "call_id": "c", "command": ["/bin/bash", "-lc", "make test"], "cwd": "/home/dev/proj",
    "parsed_cmd": [{"type": "unknown", "cmd": "make test"}],
    "formatted_output": "make: *** No rule to make target 'test'.  Stop.\n",
    "stderr": "", "exit_code": 2, "status": "failed"}


@pytest.mark.parametrize("before", [[], [{"sessionUpdate": "tool_call_update", "toolCallId": "c",
                                          "_meta": {"terminal_output": {"data": "make"}}}]])
def test_a_codex_completion_whose_start_never_arrived_is_a_shell_command(
        before: list[dict[str, Any]]) -> None:
    """Codex's end update repeats the begin event's fields in `rawOutput`: when the start was
    lost, it is all there is of the command, and it was stored as a plain tool call."""
    end = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "failed",
           "rawOutput": CODEX_END_EVENT}
    record = shell_record(fold_all([*before, end]))
    assert record.is_shell
    assert (record.command, record.work_dir) == ("make test", "/home/dev/proj")
    assert (record.output.exit_code, record.result) == (2, "failure")
    assert record.output.stdout == CODEX_END_EVENT["formatted_output"]


@pytest.mark.parametrize(
    "update",
    [{"kind": "read", "rawInput": {"path": "/x"}}, {"kind": "edit"}, {"kind": 3}, {},
     {"kind": "search", "rawInput": {"command": "rg foo"}},
     # Only Codex's end event names its command in `rawOutput`.
     {"rawOutput": {"command": ["ls"]}}, {"rawOutput": {"command": "ls", "parsed_cmd": []}}],
)
def test_other_tools_are_not_shell(update: dict[str, Any]) -> None:
    assert not shell_signal(update)


@pytest.mark.parametrize(
    ("update", "work_dir"),
    [
        ({"rawInput": {"cwd": "/a", "workdir": "/b"}, "_meta": {"terminal_info": {"cwd": "/c"}}},
         "/b"),
        ({"rawInput": {"cwd": "/a"}, "_meta": {"terminal_info": {"cwd": "/c"}}}, "/a"),
        ({"rawInput": {"workdir": "/b"}, "_meta": {"terminal_info": {"cwd": "/c"}}}, "/b"),
        ({"rawInput": {"cwd": "/a", "directory": "sub"}}, "sub"),
        ({"rawInput": {"directory": " "}, "_meta": {"terminal_info": {"cwd": "/c"}}}, "/c"),
        ({"rawInput": {"cwd": ""}, "_meta": {"terminal_info": {"cwd": "/c"}}}, "/c"),
        ({"rawInput": {"cwd": 5}}, None),
        ({}, None),
    ],
)
def test_work_dir_is_workdir_else_cwd_else_terminal_info(
    update: dict[str, Any], work_dir: str | None
) -> None:
    assert work_dir_of(update) == work_dir


def _claude(*updates: dict[str, Any]) -> list[dict[str, Any]]:
    start = {"sessionUpdate": "tool_call", "toolCallId": "t", "kind": "execute",
             "title": "Terminal", "status": "pending", "rawInput": {}}
    tail = ({"sessionUpdate": "tool_call_update", "toolCallId": "t", **u} for u in updates)
    return [start, *tail]


def test_command_arriving_after_the_placeholder_title_wins() -> None:
    pending = shell_record(fold_all(_claude()))
    assert (pending.command, pending.title) == (None, "Terminal")
    shown = shell_record(fold_all(_claude({"rawInput": {"command": "ls"}, "title": "ls"})))
    assert (shown.command, shown.title) == ("ls", "ls")


def test_command_cwd_and_description_fill_once_and_are_not_overwritten() -> None:
    shown = shell_record(fold_all(_claude(
        {"rawInput": {"command": "ls", "cwd": "/a", "description": "List"}},
        {"rawInput": {"command": "rm -rf /", "cwd": "/b", "description": "Other"}},
    )))
    assert (shown.command, shown.work_dir, shown.description) == ("ls", "/a", "List")


def test_title_follows_the_latest_non_empty_title() -> None:
    shown = shell_record(fold_all(_claude({"title": "first"}, {"title": ""}, {"title": None})))
    assert shown.title == "first"


def test_newer_claude_command_description_is_the_description() -> None:
    updates = _claude({"rawInput": {"command": "ls", "command_description": "L"}})
    shown = shell_record(fold_all(updates))
    assert shown.description == "L"


def test_opencode_models_workdir_replaces_the_session_directory_it_was_given() -> None:
    """OpenCode's pending call names the session's directory (`cwd`, filled in by the
    adapter); the model's own `workdir` arrives with the command."""
    pending = {"sessionUpdate": "tool_call", "toolCallId": "o", "title": "bash",
               "kind": "execute", "status": "pending", "rawInput": {"cwd": "/proj"}}
    running = {"sessionUpdate": "tool_call_update", "toolCallId": "o", "status": "in_progress",
               "title": "make", "rawInput": {"command": "make", "workdir": "/proj/sub"}}
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "o", "status": "completed",
            "rawInput": {"command": "make", "cwd": "/proj"},
            "rawOutput": {"output": "ok\n", "metadata": {"exit": 0}}}
    assert shell_record(fold_all([pending])).work_dir == "/proj"
    assert shell_record(fold_all([pending, running])).work_dir == "/proj/sub"
    assert shell_record(fold_all([pending, running, done])).work_dir == "/proj/sub"


def test_qwen_shell_tools_directory_is_the_work_dir() -> None:
    """Qwen Code's `run_shell_command` (Gemini CLI's shell tool) takes the directory to run in
    as `directory`, relative to the project; its model text says `Directory: sub` too."""
    start = {"sessionUpdate": "tool_call", "toolCallId": "q", "kind": "execute",
             "status": "in_progress", "title": "Shell: make", "_meta": {"toolName":
             "run_shell_command"}, "rawInput": {"command": "make", "is_background": False,
                                                "directory": "sub"}}
    shown = shell_record(fold_all([start]))
    assert (shown.command, shown.work_dir) == ("make", "sub")


def test_codex_replay_workdir_is_the_work_dir() -> None:
    state = fold_all([{"sessionUpdate": "tool_call", "toolCallId": "c", "status": "completed",
                       "rawInput": {"command": ["bash", "-lc", "ls"], "workdir": "/w"}}])
    shown = shell_record(state)
    assert (shown.command, shown.work_dir, shown.is_shell) == ("ls", "/w", True)


_SHELL_TEXT = st.lists(st.sampled_from(
    ["a", "b", " ", "\t", "\n", "\r", "\x0b", "'", '"', "\\", "$", "é", "-c", "bash"]),
    max_size=24).map("".join)


@given(_SHELL_TEXT)
@settings(max_examples=2000, deadline=None)
def test_a_wrapper_string_is_split_into_the_words_shlex_gives(text: str) -> None:
    """The words of a wrapper are shlex.split's (POSIX rules), without its cost: shlex grows
    a word a character at a time, and a 4 MiB quoted script held every caller for minutes."""
    try:
        expected: list[str] | None = shlex.split(text)
    except ValueError:
        expected = None
    try:
        words: list[str] | None = list(shell_words(text))
    except ValueError:
        words = None
    assert words == expected


_MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("script", "shown"),
    [
        ("'" + "x " * (2 * _MIB) + "'", "x " * (2 * _MIB)),
        ('"' + 'x\\"' * (_MIB + _MIB // 3) + '"', 'x"' * (_MIB + _MIB // 3)),
        ("a''" * (_MIB + _MIB // 3), "a" * (_MIB + _MIB // 3)),
        ("\\a" * (2 * _MIB), "a" * (2 * _MIB)),
        ("'\\'" * (_MIB + _MIB // 3), "\\" * (_MIB + _MIB // 3)),
    ],
    ids=["single-quoted", "escaped-double-quotes", "empty-quotes", "escapes", "quoted-backslashes"],
)
def test_a_wrapper_of_4_mib_is_unwrapped(script: str, shown: str) -> None:
    """Minutes each with shlex, whose cost grew with the square of the script."""
    assert command_of({"command": f"bash -c {script}"}) == shown

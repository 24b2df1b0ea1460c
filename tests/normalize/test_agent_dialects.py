"""The other agents' dialects (Gemini, Qwen, Goose, Kimi, Vibe, Cursor, Copilot, grok): hints,
shell detection without `kind`, exit codes only in the agents' exact text forms, and the
negative cases (reads and searches, output that merely contains the same words)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shellexec.normalize import (
    ShellState,
    cancel,
    dump_state,
    fold,
    fold_all,
    load_state,
    new_state,
    shell_record,
)
from shellexec.normalize.agents import agent_of
from shellexec.normalize.text_exits import qwen_exit, vibe_failure
from shellexec.vocabulary import AGENT_NAMES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "acp"
NOT_SHELL = sorted(path.stem for path in (FIXTURES / "not-shell").glob("*.jsonl"))
NEW_AGENTS = ("gemini", "qwen", "goose", "kimi", "vibe", "cursor", "copilot", "grok")
Update = dict[str, Any]


def _load(path: Path) -> list[Update]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _text(text: str) -> Update:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _start(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": "t1", **fields}


def _update(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "t1", **fields}


@pytest.mark.parametrize(("hint", "agent"), [
    ("gemini", "gemini"), ("gemini-cli", "gemini"), ("Gemini CLI", "gemini"),
    ("qwen-code", "qwen"), ("goose", "goose"), ("kimi-cli", "kimi"), ("KIMI", "kimi"),
    ("mistral-vibe", "vibe"), ("vibe-acp", "vibe"), ("cursor-agent", "cursor"),
    ("copilot", "copilot"), ("github-copilot", "copilot"), ("grok", "grok"),
    ("codex-acp@0.9", "codex"), ("claude", "claude"),
    ("my-agent", None), ("", None), (None, None), ("geminis", None),
])
def test_agent_hint_names_an_agent_by_name_or_alias(hint: str | None, agent: str | None) -> None:
    assert agent_of(hint) == agent


def test_every_new_agent_is_a_known_agent_name() -> None:
    assert set(NEW_AGENTS) <= set(AGENT_NAMES)


@pytest.mark.parametrize("name", [path.stem for path in sorted(FIXTURES.glob("*.jsonl"))
                                  if path.stem.split("-")[0] in NEW_AGENTS])
def test_a_hint_gives_the_same_record_as_the_shape_alone(name: str) -> None:
    updates = _load(FIXTURES / f"{name}.jsonl")
    agent = name.split("-")[0]
    assert shell_record(fold_all(updates, agent=agent)) == shell_record(fold_all(updates))


@pytest.mark.parametrize("name", NOT_SHELL)
@pytest.mark.parametrize("hinted", [False, True])
def test_reads_and_searches_are_never_shell_commands(name: str, hinted: bool) -> None:
    updates = _load(FIXTURES / "not-shell" / f"{name}.jsonl")
    hint = name.split("-")[0] if hinted else None
    assert not shell_record(fold_all(updates, agent=hint)).is_shell


def test_there_are_negative_fixtures_for_the_agents_without_kind() -> None:
    prefixes = {name.split("-")[0] for name in NOT_SHELL}
    assert {"kimi", "goose", "vibe", "qwen", "gemini"} <= prefixes


@pytest.mark.parametrize("title", ["Shell: ls", "Shell", "shell · ls", "bash: ls"])
def test_title_prefix_makes_a_call_without_kind_a_shell_command(title: str) -> None:
    assert fold(new_state(), _start(title=title, status="pending")).is_shell


@pytest.mark.parametrize("kind", ["read", "search", "edit"])
def test_title_prefix_never_overrules_an_explicit_kind(kind: str) -> None:
    state = fold(new_state(), _start(title="Shell: cat a", kind=kind, rawInput={"command": "x"}))
    assert not state.is_shell


def test_argument_shape_alone_marks_a_shell_command_only_with_shell_arguments_only() -> None:
    shell = fold(new_state(), _start(title="run it", rawInput={"command": "make", "timeout": 5}))
    viewer = fold(new_state(), _start(title="run it", rawInput={"command": "view", "path": "a"}))
    assert shell.is_shell
    assert shell.command == "make"
    assert not viewer.is_shell


def test_kimi_partial_arguments_are_neither_command_nor_output() -> None:
    state = fold_all([_start(title="Shell", status="in_progress", content=[_text('{"comm')]),
                      _update(title="Shell: ls", status="in_progress",
                              content=[_text('{"command": "ls')])])
    assert state.is_shell
    assert state.command is None
    assert state.stdout is None
    state = fold(state, _update(title="Shell: ls", status="in_progress",
                                content=[_text('{"command": "ls -la"}')]))
    assert state.command == "ls -la"
    assert state.stdout is None
    assert shell_record(cancel(state)).status == "cancelled"


def test_kimi_output_that_is_only_an_exit_sentence_inside_real_output_is_not_an_exit() -> None:
    state = fold_all([_start(title="Shell: ./t", status="in_progress",
                             content=[_text('{"command": "./t"}')]),
                      _update(status="completed",
                              content=[_text("log: Command failed with exit code: 2.\n")])])
    assert state.exit_code is None
    assert state.result == "unknown"


def test_qwen_exit_code_is_read_only_from_the_line_that_ends_its_model_text() -> None:
    text = ("Command: cat x\nDirectory: (root)\nOutput: Exit Code: 7\nError: (none)\n"
            "Exit Code: 0\nSignal: (none)\nProcess Group PGID: 9")
    assert qwen_exit(text) == 0
    assert qwen_exit("Output: a\nExit Code: 3") is None  # not Qwen's model text
    assert qwen_exit(text.replace("Exit Code: 0", "Exit Code: (none)")) is None


@pytest.mark.parametrize(("signal", "result"), [
    ("9", "failure"), ("SIGKILL", "failure"), ("(none)", "unknown")])
def test_a_qwen_command_ended_by_a_signal_failed(signal: str, result: str) -> None:
    """Qwen reports a killed command `completed` with `Exit Code: (none)` and the signal on
    its own line: it failed, as Gemini's and an ACP v2 terminal's killed commands do."""
    model = ("Command: sleep 100\nDirectory: (root)\nOutput: (empty)\nError: (none)\n"
             f"Exit Code: (none)\nSignal: {signal}\nProcess Group PGID: 7")
    state = fold_all([_start(title="Shell: sleep 100", kind="execute",
                             rawInput={"command": "sleep 100"}),
                      _update(status="completed", content=[_text(model)])], agent="qwen")
    assert state.exit_code is None
    assert state.result == result


@pytest.mark.parametrize("mark", [{"_meta": {"toolName": "run_shell_command"}}, {}])
def test_qwen_model_text_never_becomes_the_output(mark: Update) -> None:
    model = ("Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nExit Code: 0\n"
             "Signal: (none)\nProcess Group PGID: 1")
    updates = [_start(title="Shell: ls", kind="execute", rawInput={"command": "ls"}, **mark),
               _update(status="completed", content=[_text(model)])]
    state = fold_all(updates, agent=None if mark else "qwen-code")
    assert state.stdout is None
    assert state.exit_code == 0
    assert state.result == "success"


def test_a_qwen_shaped_text_from_another_agent_stays_output() -> None:
    model = "Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nExit Code: 3"
    state = fold_all([_start(title="cat qwen.log", kind="execute", rawInput={"command": "cat"}),
                      _update(status="completed", content=[_text(model)])])
    assert state.exit_code is None
    assert state.stdout is not None
    assert state.stdout.text == model


def test_text_exit_ranks_below_a_structured_exit_code() -> None:
    goose = {"_meta": {"goose": {"toolCall": {"toolName": "shell"}}}}
    state = fold_all([_start(title="shell · x", rawInput={"command": "x"}, **goose),
                      _update(status="failed",
                              content=[_text("boom\n\nCommand exited with code 3")],
                              rawOutput={"stdout": "boom", "stderr": "", "exit_code": 4})])
    assert state.exit_code == 4


def test_goose_exit_words_inside_the_output_are_not_an_exit_code() -> None:
    goose = {"_meta": {"goose": {"toolCall": {"toolName": "shell"}}}}
    state = fold_all([_start(title="shell · cat log", rawInput={"command": "cat log"}, **goose),
                      _update(status="completed",
                              content=[_text("Command exited with code 5\nthen recovered")])])
    assert state.exit_code is None


def test_gemini_exit_text_counts_only_as_the_whole_text() -> None:
    place = [_text("[current working directory /r] (Run)")]
    start = _start(title="./run", kind="execute", status="in_progress", content=place)
    whole = fold_all([start, _update(status="completed",
                                     content=[_text("Command exited with code: 2")])])
    inside = fold_all([start, _update(status="completed",
                                      content=[_text("x\nCommand exited with code: 2")])])
    assert (whole.exit_code, whole.status) == (2, "failed")
    assert (inside.exit_code, inside.result) == (None, "unknown")
    assert inside.stdout is not None
    assert inside.stdout.text == "x\nCommand exited with code: 2"


def test_gemini_shape_needs_no_hint_and_a_hint_needs_no_place_text() -> None:
    bare = _start(title="make", kind="execute", status="in_progress", content=[])
    assert fold(new_state(), bare).command is None
    assert fold(new_state("gemini-cli"), bare).command == "make"


def test_vibe_rawoutput_json_string_is_read_only_for_vibe() -> None:
    result = json.dumps({"command": "cat r.json", "stdout": "x", "stderr": "", "returncode": 3})
    claude = fold_all([_start(title="cat r.json", kind="execute",
                              rawInput={"command": "cat r.json"}),
                       _update(status="completed", rawOutput=result)])
    assert claude.stdout is not None
    assert claude.stdout.text == result
    assert claude.exit_code is None
    vibe = fold_all([_start(title="bash: cat r.json", kind="execute",
                            rawInput=json.dumps({"command": "cat r.json"}),
                            _meta={"tool_name": "bash"}),
                     _update(status="completed", rawOutput=result)])
    assert (vibe.command, vibe.exit_code, vibe.status) == ("cat r.json", 3, "failed")


def test_vibe_failure_text_parts() -> None:
    found = vibe_failure("Command failed: 'x'\nReturn code: -9")
    assert found is not None
    assert (found.exit_code, found.stdout, found.stderr) == (-9, "", "")
    assert vibe_failure("bash failed: something else\nReturn code: 2") is None


def test_a_cancel_text_on_a_failed_call_is_not_a_cancel_for_other_agents() -> None:
    state = fold_all([_start(title="x", kind="execute", rawInput={"command": "x"}),
                      _update(status="failed", rawOutput="Tool execution interrupted by user.")])
    assert state.status == "failed"


def test_agent_truncation_markers_are_text_and_do_not_set_truncated() -> None:
    marker = "a\n[... truncated for ACP transport ...]\nz"
    state = fold_all([_start(title="Shell: seq", kind="execute", rawInput={"command": "seq"},
                             _meta={"toolName": "run_shell_command"}),
                      _update(status="completed", rawOutput=marker)])
    assert state.stdout is not None
    assert state.stdout.text == marker
    assert not state.truncated


def test_goose_live_truncation_flag_is_goose_bound_not_ours() -> None:
    goose = {"_meta": {"goose": {"toolCall": {"toolName": "shell"}}}}
    live = {"toolNotification": {"type": "live_output",
                                 "params": {"sequence": 2, "chunks": [], "truncated": True}}}
    state = fold_all([_start(title="shell · yes", rawInput={"command": "yes"}, **goose),
                      _update(status="in_progress", _meta=live)])
    assert not state.truncated
    assert state.stdout is None


def test_a_resumed_state_keeps_reading_the_agent_it_recognised() -> None:
    start = _start(title="Shell: ls", status="in_progress", content=[_text('{"command": "ls"}')])
    final = _update(status="failed", content=[_text("Command failed with exit code: 2.")])
    state = fold(new_state(), start)
    restored = load_state(json.loads(json.dumps(dump_state(state))), None, None)
    assert isinstance(restored, ShellState)
    assert fold(restored, final).exit_code == 2
    assert fold(restored, final) == fold(state, final)


@pytest.mark.parametrize("update", [
    _start(title="bash: x", kind="execute", rawInput="{" * 100_000, _meta={"tool_name": "bash"}),
    _start(title="bash: x", kind="execute", rawInput='{"a": ' * 50_000 + "1" + "}" * 50_000),
    _update(status="completed", rawOutput='{"returncode": ' + "9" * 5000 + "}",
            _meta={"tool_name": "bash"}),
    _update(status="in_progress", _meta={"toolNotification": {"type": "live_output", "params": {
        "chunks": [{"stream": ["stdout"], "output": "x"}, {"stream": {}, "output": 5}, 7]}}}),
    _start(title="x [current working directory " * 1000, kind="execute", content=[]),
    _update(status="completed", content=[_text("[Output exceeded " + " Full output saved to " * 9)],
            _meta={"goose": {}}),
])
def test_hostile_agent_shapes_fold_without_raising(update: Update) -> None:
    state = fold(new_state(), update)
    assert shell_record(state).output.exit_code is None


def test_an_older_gemini_title_splits_at_its_last_place_mark() -> None:
    title = "echo '[current working directory /x]' [current working directory /r] (Echo)"
    state = fold(new_state(), _start(title=title, kind="execute", content=[]))
    assert (state.command, state.work_dir) == ("echo '[current working directory /x]'", "/r")


@pytest.mark.parametrize("flags", [{"timed_out": True}, {"output_truncated": True},
                                   {"timed_out": True, "output_truncated": True}])
def test_goose_timeout_and_truncation_flags_state_no_exit_code_and_not_our_bound(
        flags: Update) -> None:
    # Goose's rawOutput{stdout, stderr, exit_code?, timed_out?, output_truncated?}: without
    # exit_code no code is known, and its own cut is not our 256 KiB bound.
    goose = {"_meta": {"goose": {"toolCall": {"toolName": "shell"}}}}
    record = shell_record(fold_all([
        _start(title="shell · ./slow", rawInput={"command": "./slow"}, **goose),
        _update(status="failed", content=[_text("partial")],
                rawOutput={"stdout": "partial", "stderr": "", **flags})]))
    assert (record.output.exit_code, record.output.truncated) == (None, False)
    assert (record.output.stdout, record.status, record.result) == ("partial", "failed",
                                                                    "failure")


# Thousands of content blocks: each block was once looked up in a list of the others, which
# cost the square of their number (seconds at this size).
MANY_BLOCKS = 16_000


def test_qwen_model_texts_among_many_blocks_leave_the_others_as_output() -> None:
    model = ("Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nExit Code: 0\n"
             "Signal: (none)\nProcess Group PGID: 1")
    blocks = [block for index in range(MANY_BLOCKS)
              for block in (_text(model), _text(f"line {index}\n"))]
    state = fold_all([_start(title="Shell: ls", kind="execute", rawInput={"command": "ls"},
                             _meta={"toolName": "run_shell_command"}),
                      _update(status="completed", content=blocks)])
    assert state.stdout is not None
    assert state.stdout.text == "".join(f"line {index}\n" for index in range(MANY_BLOCKS))
    assert state.exit_code == 0


def test_goose_notices_among_many_blocks_leave_the_others_as_output() -> None:
    goose = {"_meta": {"goose": {"toolCall": {"toolName": "shell"}}}}
    notice = "[Output exceeded 1 lines. Full output saved to /tmp/x]"
    blocks = [_text("first\n")] + [block for index in range(MANY_BLOCKS)
                                   for block in (_text(notice), _text(f"line {index}\n"))]
    state = fold_all([_start(title="shell · x", rawInput={"command": "x"}, **goose),
                      _update(status="completed", content=blocks)])
    assert state.stdout is not None
    assert state.stdout.text == "first\n" + "".join(
        f"line {index}\n" for index in range(MANY_BLOCKS))


@pytest.mark.parametrize("hint", [None, "gemini"])
def test_gemini_keeps_the_fences_and_description_lines_a_command_printed(
        hint: str | None) -> None:
    """Fences and description blocks are Codex's, Claude's and Auggie's presentation; Gemini
    shows what the command printed: `cat INSTALL.md` lost its fence lines, and an `echo` of
    the description lost all its output."""
    place = _text("[current working directory /p] (Build finished)")
    fenced = fold_all([_start(title="cat INSTALL.md", kind="execute", status="in_progress",
                              content=[place]),
                       _update(status="completed", content=[_text("```sh\nmake\n```\n")])],
                      agent=hint)
    echoed = fold_all([_start(title="echo 'Build finished'", kind="execute",
                              status="in_progress", content=[place]),
                       _update(status="completed", content=[_text("Build finished\n")])],
                      agent=hint)
    assert shell_record(fenced).output.stdout == "```sh\nmake\n```\n"
    assert shell_record(echoed).output.stdout == "Build finished\n"


def test_copilot_output_equal_to_its_description_is_output() -> None:
    state = fold_all([
        _start(title="Show the version", kind="execute", status="pending",
               rawInput={"command": "cat VERSION", "commands": ["cat VERSION"],
                         "description": "1.2.3"}),
        _update(status="completed", content=[_text("1.2.3\n<exited with exit code 0>")])])
    record = shell_record(state)
    assert (record.output.stdout, record.result) == ("1.2.3", "success")


def test_a_tool_named_once_stays_named_when_its_arguments_look_like_a_shell_s() -> None:
    """claude-agent-acp's JetBrains profile names the tool only in the `tool_call`: the next
    update's `{command}` arguments made an MCP tool a shell command."""
    updates = _load(FIXTURES / "not-shell" / "claude-mcp-tool-named-once.jsonl")
    state = fold_all(updates)
    assert state.tool == "mcp__tmux__send"
    assert not state.is_shell
    stored = load_state(dump_state(fold_all(updates[:1])), None, None)
    assert not fold_all(updates[1:], stored).is_shell  # the name survives a reload

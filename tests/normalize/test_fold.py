"""The fold: status progress, live output forms and how they mix, late updates, cancel."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shellexec.normalize import ShellState, cancel, fold, fold_all, new_state, shell_record
from shellexec.normalize.serialize import dump_state, load_state

Update = dict[str, Any]


def start(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute", **fields}


def update(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "c", **fields}


def delta(data: str) -> Update:
    return update(_meta={"terminal_output_delta": {"data": data}})


def chunk(data: str) -> Update:
    return update(_meta={"terminal_output": {"terminal_id": "c", "data": data}})


def snapshot(text: str) -> Update:
    return update(content=[{"type": "content", "content": {"type": "text", "text": text}}])


def stdout(state: ShellState) -> str | None:
    return shell_record(state).output.stdout


CODEX = start(rawInput={"command": ["/bin/bash", "-lc", "pytest"], "cwd": "/r"},
              status="in_progress")
PLAIN = start(rawInput={"command": "pytest"}, status="pending")


@pytest.mark.parametrize(
    "value",
    [None, 0, 1.5, "tool_call", [], [{"sessionUpdate": "tool_call"}], True,
     {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
     {"sessionUpdate": "plan", "entries": []}, {"sessionUpdate": ["tool_call"]},
     {"sessionUpdate": {"x": 1}}, {}],
)
def test_anything_but_a_tool_call_update_leaves_the_state_alone(value: object) -> None:
    state = fold_all([CODEX, delta("x")])
    assert fold(state, value) is state


def test_new_state_is_pending_with_nothing_known() -> None:
    shown = shell_record(new_state())
    assert (shown.status, shown.result, shown.command, shown.is_shell) == (
        "pending", "running", None, False)
    assert shown.output.stdout is None
    assert shown.output.stderr is None


@pytest.mark.parametrize(
    ("acp", "status"),
    [("pending", "pending"), ("in_progress", "running"), ("completed", "complete"),
     ("failed", "failed"), ("cancelled", "cancelled"), ("canceled", "cancelled"),
     ("error", "failed"), ("paused", "running"), ("IN_PROGRESS", "running"),
     ("bogus", "pending"), (None, "pending"), (3, "pending")],
)
def test_acp_status_words_map_to_shell_statuses(acp: object, status: str) -> None:
    assert shell_record(fold(new_state(), start(status=acp))).status == status


def test_status_never_moves_backwards() -> None:
    state = fold_all([start(status="in_progress"), update(status="pending")])
    assert shell_record(state).status == "running"


def test_first_terminal_status_stays() -> None:
    for late in ("in_progress", "pending", "failed", "cancelled"):
        state = fold_all([start(status="completed"), update(status=late)])
        assert shell_record(state).status == "complete"


def test_statusless_output_moves_pending_to_running_but_not_a_finished_call() -> None:
    assert shell_record(fold_all([PLAIN, delta("x")])).status == "running"
    finished = fold_all([PLAIN, update(status="completed"), delta("late\n")])
    assert shell_record(finished).status == "complete"


def test_statusless_update_without_output_stays_pending() -> None:
    state = fold_all([PLAIN, update(_meta={"claudeCode": {"toolResponse": {"stdout": "x"}}})])
    assert shell_record(state).status == "pending"
    assert stdout(state) is None


def test_completed_with_nonzero_exit_is_failed() -> None:
    state = fold_all([PLAIN, update(status="completed", rawOutput={"exit_code": 2})])
    assert (shell_record(state).status, shell_record(state).result) == ("failed", "failure")


@pytest.mark.parametrize("exit_code", [None, 0])
def test_failed_stays_failed_with_exit_zero_or_none(exit_code: int | None) -> None:
    state = fold_all([PLAIN, update(status="failed", rawOutput={"exit_code": exit_code})])
    assert (shell_record(state).status, shell_record(state).result) == ("failed", "failure")


def test_known_exit_while_still_running_keeps_running() -> None:
    state = fold_all([PLAIN, update(_meta={"terminal_exit": {"exit_code": 1}})])
    assert (shell_record(state).status, shell_record(state).result) == ("pending", "running")


def test_deltas_append_in_order() -> None:
    assert stdout(fold_all([PLAIN, delta("a"), delta("b"), delta({"data": "c"}["data"])])) == "abc"
    assert stdout(fold_all([PLAIN, update(_meta={"terminal_output_delta": "bare"})])) == "bare"


def test_codex_terminal_output_is_chunks_even_when_a_chunk_repeats_the_text_so_far() -> None:
    state = fold_all([CODEX, chunk("."), chunk("."), chunk(".."), chunk("\n")])
    assert stdout(state) == "....\n"


def test_codex_agent_hint_reads_terminal_output_as_chunks_without_a_codex_shape() -> None:
    state = fold_all([PLAIN, chunk("y\n"), chunk("y\n")], agent="codex")
    assert stdout(state) == "y\ny\n"


CLAUDE_TERMINAL = start(rawInput={}, status="pending", title="Terminal",
                        _meta={"claudeCode": {"toolName": "Bash"},
                               "terminal_info": {"terminal_id": "c"}})


def test_claude_terminal_output_replaces_the_output_shown() -> None:
    """The spec's Claude rule: replace the displayed output with `terminal_output.data`."""
    state = fold_all([CLAUDE_TERMINAL, chunk("first snapshot\n"), chunk("replacement\n")])
    assert stdout(state) == "replacement\n"


@pytest.mark.parametrize("hint", ["claude", "claude-agent-acp", "Claude Code"])
def test_a_claude_agent_hint_reads_terminal_output_as_snapshots_without_a_claude_shape(
        hint: str) -> None:
    state = fold_all([PLAIN, chunk("y\n"), chunk("n\n")], agent=hint)
    assert stdout(state) == "n\n"


def test_codex_chunks_win_over_a_claude_hint() -> None:
    assert stdout(fold_all([CODEX, chunk("y\n"), chunk("y\n")], agent="claude")) == "y\ny\n"


def test_a_claude_snapshot_loses_its_echo_and_survives_a_saved_state() -> None:
    state = fold_all([CLAUDE_TERMINAL, update(rawInput={"command": "ls"}, title="ls")])
    saved = load_state(json.loads(json.dumps(dump_state(state))), None, None)
    assert stdout(fold_all([chunk("$ ls\na.txt\n"), chunk("b.txt\n")], saved)) == "b.txt\n"


def test_terminal_output_repeating_the_whole_text_is_a_snapshot_and_not_duplicated() -> None:
    assert stdout(fold_all([PLAIN, chunk("all of it"), chunk("all of it")])) == "all of it"


def test_terminal_output_extending_the_text_is_a_growing_snapshot() -> None:
    assert stdout(fold_all([PLAIN, chunk("line 1\n"), chunk("line 1\nline 2\n")])) == (
        "line 1\nline 2\n")


def test_terminal_output_that_does_not_extend_the_text_is_appended() -> None:
    assert stdout(fold_all([PLAIN, chunk("line 1\n"), chunk("line 2\n")])) == "line 1\nline 2\n"


def test_cumulative_snapshots_replace_and_never_duplicate() -> None:
    state = fold_all([PLAIN, snapshot("a\n"), snapshot("a\nb\n"), snapshot("a\nb\n")])
    assert stdout(state) == "a\nb\n"


def test_identical_snapshot_keeps_the_same_stream_object() -> None:
    state = fold_all([PLAIN, snapshot("a\n")])
    assert fold(state, snapshot("a\n")).stdout is state.stdout


def test_delta_after_cumulative_content_appends_to_it() -> None:
    assert stdout(fold_all([PLAIN, snapshot("a\n"), delta("b\n")])) == "a\nb\n"


def test_cumulative_content_after_terminal_output_is_ignored_as_a_presentation_copy() -> None:
    state = fold_all([PLAIN, delta("exact\n"), snapshot("```sh\nexact\n```")])
    assert stdout(state) == "exact\n"


def test_final_replaces_live_text_field_by_field_and_omitted_fields_keep_their_value() -> None:
    state = fold_all([PLAIN, delta("live\n"),
                      update(status="completed", rawOutput={"stderr": "warn\n"})])
    assert (stdout(state), shell_record(state).output.stderr) == ("live\n", "warn\n")


def test_final_without_output_keeps_the_live_text() -> None:
    state = fold_all([CODEX, chunk("out\n"),
                      update(status="completed", _meta={"terminal_exit": {"exit_code": 0}})])
    assert stdout(state) == "out\n"
    assert shell_record(state).result == "success"


def test_final_with_empty_output_replaces_live_text() -> None:
    state = fold_all([CODEX, chunk("noise"),
                      update(status="completed", rawOutput={"formatted_output": ""})])
    assert stdout(state) == ""


def test_late_delta_after_a_final_text_is_already_part_of_it() -> None:
    state = fold_all([CODEX, chunk("a\n"),
                      update(status="completed", rawOutput={"formatted_output": "a\nb\n"}),
                      chunk("b\n")])
    assert stdout(state) == "a\nb\n"


def test_late_delta_after_a_final_without_text_is_kept() -> None:
    state = fold_all([CODEX, chunk("a\n"),
                      update(status="completed", _meta={"terminal_exit": {"exit_code": 0}}),
                      chunk("b\n")])
    assert stdout(state) == "a\nb\n"


def test_partial_raw_output_never_replaces_a_final_one() -> None:
    state = fold_all([PLAIN, update(status="completed", rawOutput="final\n"),
                      update(status="in_progress", rawOutput="partial")])
    assert stdout(state) == "final\n"


def test_a_running_call_s_text_arriving_after_the_finished_call_s_text_is_older() -> None:
    """grok and Copilot end a call with its whole output as content text; the same call's
    running text, delivered after it, put the older text back (ADR 0013)."""
    running = update(status="in_progress", content=snapshot("step 1 of 2\n")["content"])
    finished = update(status="completed",
                      content=snapshot("step 1 of 2\nstep 2 of 2\n")["content"])
    for late in (running, delta("step 1 of 2\n")):
        state = fold_all([PLAIN, running, finished, late])
        assert stdout(state) == "step 1 of 2\nstep 2 of 2\n", late
        assert shell_record(state).status == "complete"


def test_no_text_replaces_a_final_one() -> None:
    """Neither a finished call's content text nor its `rawOutput` text is replaced by content
    text arriving later, with a status or without (a reviewer: a later `5\\n` replaced
    Codex's whole `formatted_output`)."""
    later = update(content=snapshot("5\n")["content"])
    for final in (update(status="completed", content=snapshot("1\n5\n")["content"]),
                  update(status="completed", rawOutput={"formatted_output": "1\n5\n"}),
                  update(status="completed", rawOutput={"stdout": "1\n5\n"})):
        state = fold_all([PLAIN, final, later, update(status="completed", **later)])
        assert stdout(state) == "1\n5\n", final


def blocks(*texts: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text} for text in texts]


CLAUDE = start(rawInput={"command": "ls"}, status="pending", title="ls")


def test_plain_raw_output_in_the_same_update_as_terminal_output_does_not_replace_it() -> None:
    final = update(status="completed", rawOutput="tool_result text\n",
                   _meta={"terminal_output": {"data": "terminal text\n"},
                          "terminal_exit": {"exit_code": 0}})
    state = fold_all([CLAUDE, final])
    assert stdout(state) == "terminal text\n"
    assert shell_record(state).result == "success"


@pytest.mark.parametrize("raw", ["tool_result text\n", blocks("tool_result", "text\n")])
@pytest.mark.parametrize("live", [chunk("terminal text\n"), delta("terminal text\n")])
def test_final_plain_raw_output_after_terminal_output_does_not_replace_it(
    raw: object, live: Update
) -> None:
    state = fold_all([CLAUDE, live, update(status="completed", rawOutput=raw)])
    assert stdout(state) == "terminal text\n"


def test_plain_raw_output_keeps_the_exit_code_of_terminal_exit() -> None:
    state = fold_all([CLAUDE, chunk("Exit code 2\nls: nope\n"),
                      update(status="failed", rawOutput="Exit code 2\nls: nope (raw)\n",
                             _meta={"terminal_exit": {"exit_code": 2}})])
    assert (stdout(state), shell_record(state).output.exit_code) == ("Exit code 2\nls: nope\n", 2)


@pytest.mark.parametrize("raw", [{"formatted_output": "final\n", "exit_code": 3},
                                 {"output": "final\n", "metadata": {"exit": 3}},
                                 {"stdout": "final\n", "exit_code": 3}])
def test_structured_raw_output_still_replaces_terminal_output(raw: object) -> None:
    state = fold_all([CLAUDE, delta("live\n"), update(status="completed", rawOutput=raw)])
    assert (stdout(state), shell_record(state).output.exit_code) == ("final\n", 3)


def test_plain_raw_output_without_terminal_output_is_the_fallback() -> None:
    state = fold_all([CLAUDE, snapshot("```console\nfenced\n```"),
                      update(status="completed", rawOutput="raw\n")])
    assert stdout(state) == "raw\n"


@pytest.mark.parametrize("raw", ["tool_result text\n", blocks("tool_result text\n")])
def test_terminal_output_arriving_after_a_final_plain_raw_output_replaces_it(raw: object) -> None:
    state = fold_all([CLAUDE, update(status="completed", rawOutput=raw),
                      chunk("terminal text\n")])
    assert stdout(state) == "terminal text\n"


def test_deltas_arriving_after_a_final_plain_raw_output_replace_it_then_append() -> None:
    state = fold_all([CLAUDE, update(status="completed", rawOutput="(raw) a\nb\n"),
                      delta("a\n"), delta("b\n")])
    assert stdout(state) == "a\nb\n"


def test_terminal_output_after_a_structured_final_is_already_part_of_it() -> None:
    state = fold_all([CLAUDE, update(status="completed", rawOutput={"stdout": "final\n"}),
                      chunk("live\n"), update(status="completed", rawOutput="plain\n")])
    assert stdout(state) == "final\n"


def test_stderr_comes_only_from_explicit_stderr_fields() -> None:
    state = fold_all([PLAIN, delta("error: boom\n"), snapshot("error: boom\nwarning: x\n"),
                      update(status="failed", rawOutput="error: boom\n")])
    assert shell_record(state).output.stderr is None


def test_cancel_keeps_a_finished_call_as_it_is() -> None:
    finished = fold_all([PLAIN, update(status="completed")])
    assert cancel(finished) is finished


def test_cancel_turns_a_running_call_cancelled_and_later_progress_does_not_reopen_it() -> None:
    cancelled = cancel(fold_all([PLAIN, delta("a")]))
    later = fold_all([update(status="in_progress"), delta("b")], state=cancelled)
    assert shell_record(later).status == "cancelled"
    assert stdout(later) == "ab"


def test_cancelled_call_reconciles_to_the_agents_late_failure() -> None:
    cancelled = cancel(fold_all([PLAIN, delta("a")]))
    late = fold(cancelled, update(status="failed",
                                  rawOutput={"stdout": "a\nerr\n", "exit_code": 1}))
    shown = shell_record(late)
    assert (shown.status, shown.result, stdout(late)) == ("failed", "failure", "a\nerr\n")


def test_cancelled_with_nonzero_exit_is_a_failure() -> None:
    killed = update(status="cancelled", _meta={"terminal_exit": {"exit_code": 130}})
    state = fold_all([PLAIN, killed])
    assert (shell_record(state).status, shell_record(state).result) == ("cancelled", "failure")


def test_fold_all_continues_from_a_given_state() -> None:
    first = fold_all([PLAIN, delta("a")])
    assert stdout(fold_all([delta("b")], state=first)) == "ab"


def test_fold_does_not_mutate_the_update() -> None:
    item = chunk("x")
    copy = {**item, "_meta": {"terminal_output": {**item["_meta"]["terminal_output"]}}}
    fold(fold(new_state(), PLAIN), item)
    assert item == copy


def test_tool_call_arriving_after_its_updates_still_counts() -> None:
    state = fold_all([update(status="in_progress", rawInput={"command": "ls"}), delta("a"),
                      start(status="pending", title="ls")])
    shown = shell_record(state)
    assert (shown.status, shown.is_shell, stdout(state)) == ("running", True, "a")

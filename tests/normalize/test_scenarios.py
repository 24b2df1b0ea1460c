"""The specification's scenarios and failure modes that concern normalization, by name."""

from __future__ import annotations

import dataclasses

from normalize.acp_updates import start, text, update

from shellexec.normalize import (
    MAX_FIELD_BYTES,
    OutputSummary,
    ShellOutput,
    cancel,
    fold,
    fold_all,
    new_state,
    shell_record,
    summarize,
)

CODEX_START = start(
    title="make test",
    kind="execute",
    status="in_progress",
    rawInput={"command": ["/bin/bash", "-lc", "make test"], "cwd": "/repo",
              "parsed_cmd": [{"type": "unknown", "cmd": "make test"}]},
    _meta={"terminal_info": {"terminal_id": "call_1", "cwd": "/repo"}},
)
CODEX_STATE = fold(new_state(), CODEX_START)


def test_scenario_codex_deltas_then_formatted_output_and_exit_4() -> None:
    state = fold(new_state(), CODEX_START)
    state = fold(state, update(_meta={"terminal_output_delta": {"data": "line 1\n"}}))
    assert shell_record(state).output.stdout == "line 1\n"
    assert shell_record(state).status == "running"
    state = fold(state, update(_meta={"terminal_output_delta": {"data": "line 2\n"}}))
    assert shell_record(state).output.stdout == "line 1\nline 2\n"
    state = fold(state, update(
        status="failed",
        rawOutput={"formatted_output": "line 1\nline 2\n", "exit_code": 4},
        _meta={"terminal_exit": {"exit_code": 4, "signal": None}},
    ))
    shown = shell_record(state)
    assert shown.output.stdout == "line 1\nline 2\n"
    assert shown.output.exit_code == 4
    assert (shown.status, shown.result) == ("failed", "failure")


def test_scenario_claude_terminal_output_then_terminal_exit_shows_exact_exit_code() -> None:
    state = fold_all([
        start(title="Terminal", kind="execute", status="pending", rawInput={},
              _meta={"terminal_info": {"terminal_id": "t"}}),
        update(rawInput={"command": "pytest"}, title="pytest"),
        update(_meta={"terminal_output": {"terminal_id": "t", "data": "Exit code 3\n1 failed"}}),
        update(status="failed", _meta={"terminal_exit": {"terminal_id": "t", "exit_code": 3}}),
    ])
    shown = shell_record(state)
    assert shown.command == "pytest"
    assert shown.output.stdout == "Exit code 3\n1 failed"
    assert shown.output.exit_code == 3
    assert shown.result == "failure"


def test_scenario_opencode_cumulative_content_then_exit_7_while_completed_is_failure() -> None:
    state = fold_all([
        start(title="bash", kind="execute", status="pending", rawInput={"cwd": "/repo"}),
        update(status="in_progress", rawInput={"command": "./check.sh", "cwd": "/repo"},
               content=[text("checking\n")]),
        update(status="in_progress", content=[text("checking\nfound 3 issues\n")]),
        update(status="in_progress", content=[text("checking\nfound 3 issues\n")]),
        update(status="completed", content=[text("checking\nfound 3 issues\n")],
               rawOutput={"output": "checking\nfound 3 issues\n",
                          "metadata": {"output": "checking\nfound 3 issues\n", "exit": 7}}),
    ])
    shown = shell_record(state)
    assert shown.output.stdout == "checking\nfound 3 issues\n"
    assert shown.output.exit_code == 7
    assert (shown.status, shown.result) == ("failed", "failure")


def test_scenario_auggie_return_code_0_is_success() -> None:
    tool_text = ("Here are the results from executing the command.\n<return-code>\n0\n"
                 "</return-code>\n<output>\nhello\n\n</output>")
    state = fold_all([
        start(title="Run `echo hello`", kind="execute", content=[],
              rawInput={"command": "echo hello", "wait": True, "cwd": "/repo"}),
        update(status="completed", rawOutput={"output": tool_text}),
    ])
    shown = shell_record(state)
    assert shown.output.stdout == "hello\n"
    assert shown.output.exit_code == 0
    assert (shown.status, shown.result) == ("complete", "success")


def test_scenario_omp_glued_echo_with_structured_final_without_stdout_field() -> None:
    state = fold_all([
        start(title="$ ls", kind="execute", status="pending", rawInput={"command": "ls"},
              content=[text("$ ls")]),
        update(status="completed", content=[text("$ lsREADME.md\nsrc\n")],
               rawOutput={"details": {"wallTimeMs": 3.1}}),
    ])
    shown = shell_record(state)
    assert shown.command == "ls"
    assert shown.output.stdout == "README.md\nsrc\n"


def test_scenario_plain_output_without_exit_status_is_unknown_and_neutral() -> None:
    state = fold_all([
        start(title="Terminal", kind="execute", status="pending", rawInput={}),
        update(rawInput={"command": "date"}, title="date"),
        update(status="completed", rawOutput="Sat Nov 29 09:14:00 UTC 2026\n"),
    ])
    shown = shell_record(state)
    assert shown.output.stdout == "Sat Nov 29 09:14:00 UTC 2026\n"
    assert shown.output.exit_code is None
    assert (shown.status, shown.result) == ("complete", "unknown")


def test_scenario_cancelled_without_exit_code_keeps_transcript() -> None:
    running = fold_all([CODEX_START, update(_meta={"terminal_output": {"data": "partial\n"}})])
    for cancelled in (cancel(running), fold(running, update(status="cancelled"))):
        shown = shell_record(cancelled)
        assert (shown.status, shown.result) == ("cancelled", "unknown")
        assert shown.output.stdout == "partial\n"
        assert shown.output.exit_code is None
        assert summarize(shown.output).has_output


def test_scenario_terminal_update_after_turn_settled_reconciles_transcript() -> None:
    running = fold_all([CODEX_START, update(_meta={"terminal_output": {"data": "partial\n"}})])
    settled = cancel(running)
    late = fold(settled, update(
        status="completed",
        rawOutput={"formatted_output": "partial\ndone\n", "exit_code": 0},
        _meta={"terminal_exit": {"exit_code": 0}},
    ))
    shown = shell_record(late)
    assert (shown.status, shown.result) == ("complete", "success")
    assert shown.output.stdout == "partial\ndone\n"


def test_scenario_output_over_256_kib_stays_bounded_keeps_newest_and_marks_truncated() -> None:
    line = "é" * 511 + "\n"  # 1 KiB per line, every character two bytes
    live = fold(CODEX_STATE, update(_meta={"terminal_output_delta": {"data": "x" + line * 300}}))
    final = fold(live, update(status="completed", rawOutput={"formatted_output": line * 400}))
    for state in (live, final):
        stdout = shell_record(state).output.stdout
        assert stdout is not None
        assert len(stdout.encode()) <= MAX_FIELD_BYTES
        assert stdout.endswith(line)
        assert shell_record(state).output.truncated
        assert summarize(shell_record(state).output).truncated


def test_scenario_summary_of_command_without_output_offers_no_output() -> None:
    state = fold(new_state(), CODEX_START)
    assert summarize(shell_record(state).output) == OutputSummary(
        exit_code=None, truncated=False, has_output=False, stdout_bytes=0, stderr_bytes=0
    )
    assert state.summary() == summarize(shell_record(state).output)


def test_scenario_summary_carries_byte_counts_and_no_body() -> None:
    summary = summarize(ShellOutput(exit_code=0, stdout="héllo", stderr="", truncated=False))
    assert summary == OutputSummary(
        exit_code=0, truncated=False, has_output=True, stdout_bytes=6, stderr_bytes=0
    )
    names = {field.name for field in dataclasses.fields(OutputSummary)}
    assert not names & {"stdout", "stderr"}


def test_failure_mode_malformed_output_kept_and_malformed_exit_unknown() -> None:
    state = fold_all([
        start(kind="execute", rawInput={"command": "make"}),
        update(status="completed", rawOutput={
            "output": "<return-code>\nzero\n</return-code>\n<output>\nbuilt target\n"}),
    ])
    shown = shell_record(state)
    assert shown.output.stdout == "built target\n"
    assert shown.output.exit_code is None
    assert shown.result == "unknown"


def test_failure_mode_statusless_update_with_output_means_running() -> None:
    state = fold_all([
        start(kind="execute", status="pending", rawInput={"command": "sleep 1"}),
        update(_meta={"terminal_output_delta": "tick\n"}),
    ])
    assert shell_record(state).status == "running"


def test_failure_mode_final_aggregate_replaces_live_text_without_duplicating_it() -> None:
    live = fold_all([CODEX_START, update(_meta={"terminal_output_delta": {"data": "a\nb\n"}})])
    final = fold(live, update(status="completed", rawOutput={"aggregated_output": "a\nb\n"}))
    assert shell_record(final).output.stdout == "a\nb\n"


def test_failure_mode_acp_failed_and_cancelled_are_terminal_without_exit_code() -> None:
    for status, result in (("failed", "failure"), ("cancelled", "unknown")):
        shown = shell_record(fold(CODEX_STATE, update(status=status)))
        assert shown.status in ("failed", "cancelled")
        assert (shown.output.exit_code, shown.result) == (None, result)

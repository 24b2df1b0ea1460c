"""Rules of the specification that no scenario test pinned on its own (see the coverage table
in docs/spec-summary.md), each folded through the public normalizer as an agent sends it."""

from __future__ import annotations

from normalize.acp_updates import Update, start, text, update

from shellexec.normalize import MAX_FIELD_BYTES, fold_all, shell_record, summarize


def codex_classic_shell(stdout: str, stderr: str, combined: str, exit_code: int) -> list[Update]:
    """Rust codex-acp with Codex's classic shell tool: the streams come apart in `stdout` and
    `stderr`, interleaved in `aggregated_output`/`formatted_output`; live chunks are merged."""
    return [
        start(title="make", kind="execute", status="in_progress",
              content=[{"type": "terminal", "terminalId": "call_1"}],
              rawInput={"command": ["/bin/bash", "-lc", "make"], "cwd": "/repo",
                        "parsed_cmd": [{"type": "unknown", "cmd": "make"}], "source": "agent"},
              _meta={"terminal_info": {"terminal_id": "call_1", "cwd": "/repo"}}),
        update(_meta={"terminal_output": {"terminal_id": "call_1", "data": combined}}),
        update(status="failed",
               rawOutput={"stdout": stdout, "stderr": stderr, "aggregated_output": combined,
                          "formatted_output": combined, "exit_code": exit_code,
                          "status": "failed"},
               _meta={"terminal_exit": {"terminal_id": "call_1", "exit_code": exit_code,
                                        "signal": None}}),
    ]


def test_codex_combined_final_output_does_not_show_its_stderr_twice() -> None:
    # Spec: formatted_output is the authoritative combined output, and a final aggregate
    # "cannot duplicate the visible text" (ADR 0130).
    combined = "cc -c main.c\nmain.c:3: error: expected ';'\nmake: *** [all] Error 1\n"
    stderr = "main.c:3: error: expected ';'\nmake: *** [all] Error 1\n"
    shown = shell_record(fold_all(codex_classic_shell("cc -c main.c\n", stderr, combined, 2)))
    assert shown.output.stdout == combined
    assert shown.output.stderr == ""
    assert summarize(shown.output).stderr_bytes == 0
    assert (shown.output.exit_code, shown.result) == (2, "failure")


def test_codex_unified_exec_result_keeps_its_empty_stderr() -> None:
    combined = "ls: cannot access 'x': No such file or directory\n"
    shown = shell_record(fold_all(codex_classic_shell(combined, "", combined, 2)))
    assert (shown.output.stdout, shown.output.stderr) == (combined, "")


def test_separate_stdout_and_stderr_fields_without_combined_text_stay_apart() -> None:
    shown = shell_record(fold_all([
        start(kind="execute", rawInput={"command": "make"}),
        update(status="failed", rawOutput={"stdout": "built\n", "stderr": "warning: w\n",
                                           "exit_code": 1}),
    ]))
    assert (shown.output.stdout, shown.output.stderr) == ("built\n", "warning: w\n")


def test_opencode_final_raw_output_is_preferred_over_the_last_content_snapshot() -> None:
    # Spec: OpenCode "on completion prefer rawOutput.output": here what the model saw, with
    # OpenCode's truncation notice, differs from the cumulative snapshot shown live.
    final = "...output truncated...\nFull output saved to: /tmp/tool_1\nline 3000\n"
    shown = shell_record(fold_all([
        start(title="bash", kind="execute", status="pending", rawInput={"cwd": "/repo"}),
        update(status="in_progress", title="seq 3000", rawInput={"command": "seq 3000"},
               content=[text("line 1\nline 2\n")]),
        update(status="completed", content=[text("line 1\nline 2\n")],
               rawOutput={"output": final,
                          "metadata": {"output": "line 1\nline 2\n", "exit": 0,
                                       "truncated": True}}),
    ]))
    assert shown.output.stdout == final
    assert (shown.output.exit_code, shown.result) == (0, "success")
    assert shown.output.truncated is False  # OpenCode's own cut, not our 256 KiB bound


def test_claude_terminal_output_is_shown_once_beside_its_plain_fallback_text() -> None:
    # Spec: Claude replaces the displayed output with _meta.terminal_output.data; the plain
    # rawOutput older releases also send is only the fallback.
    shown = shell_record(fold_all([
        start(title="Terminal", kind="execute", status="pending", rawInput={},
              _meta={"terminal_info": {"terminal_id": "t"}}),
        update(rawInput={"command": "npm test"}, title="npm test"),
        update(_meta={"terminal_output": {"terminal_id": "t", "data": "3 passing\n"}}),
        update(status="completed", rawOutput="3 passing",
               _meta={"terminal_exit": {"terminal_id": "t", "exit_code": 0, "signal": None}}),
    ], agent="claude"))
    assert shown.output.stdout == "3 passing\n"
    assert (shown.output.exit_code, shown.result) == (0, "success")


def test_auggie_stderr_section_is_the_explicit_stderr() -> None:
    tool_text = ("Here are the results from executing the command.\n<return-code>\n1\n"
                 "</return-code>\n<output>\nbuilt\n\n</output>\n<stderr>\nwarning: w\n\n"
                 "</stderr>")
    shown = shell_record(fold_all([
        start(title="Run `make`", kind="execute", content=[],
              rawInput={"command": "make", "wait": True, "cwd": "."}),
        update(status="failed", rawOutput={"output": tool_text}),
    ]))
    assert (shown.output.stdout, shown.output.stderr) == ("built\n", "warning: w\n")
    assert (shown.output.exit_code, shown.result) == (1, "failure")


def test_malformed_terminal_exit_is_unknown_and_leaves_the_next_source_to_speak() -> None:
    # Spec: "malformed exit metadata remains unknown"; precedence falls to the native field.
    base = [start(kind="execute", rawInput={"command": ["bash", "-lc", "make"]}),
            update(_meta={"terminal_output_delta": {"data": "x\n"}})]
    unknown = shell_record(fold_all([*base, update(
        status="completed", _meta={"terminal_exit": {"exit_code": "zero"}})]))
    assert (unknown.output.exit_code, unknown.result) == (None, "unknown")
    native = shell_record(fold_all([*base, update(
        status="completed", rawOutput={"exit_code": 3},
        _meta={"terminal_exit": {"exit_code": "zero"}})]))
    assert (native.output.exit_code, native.result) == (3, "failure")


def test_stderr_over_the_bound_alone_marks_the_output_truncated() -> None:
    # Spec data model: `truncated` is true when *either* stored text field hit its bound.
    line = "warning: é\n"
    shown = shell_record(fold_all([
        start(kind="execute", rawInput={"command": "make"}),
        update(status="completed", rawOutput={"stdout": "ok\n", "stderr": line * 30_000,
                                              "exit_code": 0}),
    ]))
    assert shown.output.stdout == "ok\n"
    stderr = shown.output.stderr
    assert stderr is not None
    assert stderr.endswith(line)
    assert len(stderr.encode()) <= MAX_FIELD_BYTES
    assert shown.output.truncated
    assert summarize(shown.output).truncated

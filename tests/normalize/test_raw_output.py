"""Each agent's final `rawOutput`: which field is the output, stderr and exit code."""

from __future__ import annotations

import pytest

from shellexec.normalize.exit_codes import ExitRank
from shellexec.normalize.raw_output import FinalOutput, read_raw_output


def test_codex_prefers_formatted_then_aggregated_output_which_already_holds_stderr() -> None:
    raw = {"stdout": "out", "stderr": "err", "aggregated_output": "out+err",
           "formatted_output": "formatted", "exit_code": 1}
    assert read_raw_output(raw) == FinalOutput("formatted", "", 1, ExitRank.NATIVE,
                                               combined=True)
    del raw["formatted_output"]
    assert read_raw_output(raw) == FinalOutput("out+err", "", 1, ExitRank.NATIVE, combined=True)
    del raw["stderr"]
    assert read_raw_output(raw).stderr is None


def test_present_but_empty_fields_are_stated_and_empty() -> None:
    raw = {"formatted_output": "", "aggregated_output": "x", "stderr": ""}
    assert read_raw_output(raw) == FinalOutput("", "", None, ExitRank.NONE, combined=True)


def test_typescript_codex_exit_only_result_states_no_output() -> None:
    assert read_raw_output({"exit_code": 0}) == FinalOutput(None, None, 0, ExitRank.NATIVE)


def test_opencode_no_output_placeholder_means_empty() -> None:
    raw = {"output": "(no output)", "metadata": {"output": "", "exit": 0}}
    assert read_raw_output(raw).stdout == ""


def test_opencode_command_that_printed_the_placeholder_keeps_it() -> None:
    raw = {"output": "(no output)", "metadata": {"output": "(no output)", "exit": 0}}
    assert read_raw_output(raw).stdout == "(no output)"


def test_opencode_truncation_notice_is_kept() -> None:
    output = "...output truncated...\nFull output saved to: /tmp/out.txt\nlast line\n"
    assert read_raw_output({"output": output, "metadata": {"exit": 0}}).stdout == output


def test_opencode_output_looking_like_markup_is_not_parsed() -> None:
    output = "<output>\nnot auggie\n</output>"
    assert read_raw_output({"output": output, "metadata": {"exit": 0}}).stdout == output


def test_opencode_error_without_output_states_no_stdout() -> None:
    assert read_raw_output({"error": "permission denied", "metadata": {}}).stdout is None


def test_opencode_metadata_output_is_a_fallback() -> None:
    assert read_raw_output({"metadata": {"output": "partial", "exit": None}}).stdout == "partial"


def test_auggie_markup_gives_output_and_return_code_at_markup_rank() -> None:
    raw = {"output": "<return-code>\n0\n</return-code>\n<output>\nok\n\n</output>"}
    assert read_raw_output(raw) == FinalOutput("ok\n", None, 0, ExitRank.MARKUP)


def test_structured_exit_code_outranks_the_markup_return_code() -> None:
    raw = {"output": "<return-code>\n0\n</return-code>\n<output>\nok\n</output>", "exit_code": 1}
    assert read_raw_output(raw) == FinalOutput("ok", None, 1, ExitRank.NATIVE)


def test_omp_structured_result_drops_its_wall_time_and_exit_trailers() -> None:
    raw = {"content": [{"type": "text", "text": "boom\n\n\nWall time: 0.01 seconds\n\n"
                                                 "Command exited with code 2"}],
           "details": {"exitCode": 2, "wallTimeMs": 9.8}, "isError": True}
    assert read_raw_output(raw) == FinalOutput("boom\n", None, 2, ExitRank.NATIVE)


def test_omp_trailer_text_without_details_is_someone_elses_output_and_kept() -> None:
    raw = {"content": [{"type": "text", "text": "x\n\nWall time: 1 seconds"}]}
    assert read_raw_output(raw).stdout == "x\n\nWall time: 1 seconds"


def test_omp_timeout_text_is_kept() -> None:
    raw = {"content": [{"type": "text", "text": "[Command timed out after 300 seconds]"}],
           "details": {"timedOut": True}}
    assert read_raw_output(raw).stdout == "[Command timed out after 300 seconds]"


def test_omp_details_without_content_states_no_stdout() -> None:
    assert read_raw_output({"details": {"wallTimeMs": 1.0}}) == FinalOutput()


def test_claude_plain_string_and_text_block_array() -> None:
    assert read_raw_output("Exit code 2\nboom").stdout == "Exit code 2\nboom"
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "..."},
              {"type": "text", "text": "b"}]
    assert read_raw_output(blocks).stdout == "a\nb"


@pytest.mark.parametrize("raw", [None, 3, True, [], [1, 2], {"unrelated": "x"}, {"stdout": 5}])
def test_anything_else_states_nothing(raw: object) -> None:
    assert read_raw_output(raw) == FinalOutput()


def test_generic_stdout_and_stderr_fields() -> None:
    assert read_raw_output({"stdout": "o", "stderr": "e"}) == FinalOutput("o", "e")

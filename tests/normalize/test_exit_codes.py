"""What counts as an exit code, and which source wins."""

from __future__ import annotations

from typing import Any

import pytest

from shellexec.normalize import fold_all, shell_record
from shellexec.normalize.exit_codes import native_exit, parse_exit_code, terminal_exit


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (0, 0),
        (2, 2),
        (-1, -1),
        (2.0, 2),
        (-0.0, 0),
        ("2", 2),
        (" 137 ", 137),
        ("+3", 3),
        ("-1", -1),
        ("007", 7),
        (2**31 - 1, 2**31 - 1),
        (-(2**31), -(2**31)),
        # Unsigned values above the signed range: the signed value with the same bits.
        (3221225477, -1073741819),  # 0xC0000005, a Windows access violation
        ("3221225477", -1073741819),
        (2**31, -(2**31)),
        (2**32 - 1, -1),
    ],
)
def test_parse_exit_code_accepts_integers_integral_floats_and_decimal_strings(
    value: object, code: int
) -> None:
    assert parse_exit_code(value) == code


@pytest.mark.parametrize(
    "value",
    [
        None, True, False, 2.5, float("nan"), float("inf"), float("-inf"), 2**32, -(2**31) - 1,
        "", "two", "2.0", "0x10", "1e3", "٣", "1_000", "9" * 5000, [], {}, [0], {"code": 0},
    ],
)
def test_parse_exit_code_rejects_everything_else_as_unknown(value: object) -> None:
    assert parse_exit_code(value) is None


def test_terminal_exit_null_means_killed_by_a_signal_and_unknown() -> None:
    assert terminal_exit({"terminal_exit": {"exit_code": None, "signal": "SIGKILL"}}) is None


@pytest.mark.parametrize(
    ("raw_output", "code"),
    [
        ({"exit_code": 4}, 4),
        ({"metadata": {"exit": 7}}, 7),
        ({"details": {"exitCode": 2}}, 2),
        ({"metadata": {"exit": None}}, None),
        ({"details": {}}, None),
        ("exit_code: 3", None),
    ],
)
def test_native_exit_reads_codex_opencode_and_omp_fields(
    raw_output: object, code: int | None
) -> None:
    assert native_exit(raw_output) == code


def _call(*updates: dict[str, Any]) -> list[dict[str, Any]]:
    start = {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
             "rawInput": {"command": "x"}}
    tail = ({"sessionUpdate": "tool_call_update", "toolCallId": "c", **u} for u in updates)
    return [start, *tail]


AUGGIE_3 = {"output": "<return-code>\n3\n</return-code>\n<output>\nx\n</output>"}


def test_terminal_exit_wins_over_native_and_markup_whatever_the_order() -> None:
    first = fold_all(_call({"_meta": {"terminal_exit": {"exit_code": 1}}},
                           {"rawOutput": {"exit_code": 2}}, {"rawOutput": AUGGIE_3}))
    last = fold_all(_call({"rawOutput": AUGGIE_3}, {"rawOutput": {"exit_code": 2}},
                          {"_meta": {"terminal_exit": {"exit_code": 1}}}))
    assert shell_record(first).output.exit_code == shell_record(last).output.exit_code == 1


def test_native_exit_wins_over_auggie_return_code() -> None:
    state = fold_all(_call({"rawOutput": {"exit_code": 2}}, {"rawOutput": AUGGIE_3}))
    assert shell_record(state).output.exit_code == 2


def test_later_source_of_the_same_rank_corrects_the_exit_code() -> None:
    state = fold_all(_call({"rawOutput": {"exit_code": 2}}, {"rawOutput": {"exit_code": 5}}))
    assert shell_record(state).output.exit_code == 5


def test_invalid_exit_value_leaves_a_known_exit_code_alone() -> None:
    state = fold_all(_call({"rawOutput": {"exit_code": 2}},
                           {"_meta": {"terminal_exit": {"exit_code": None}}},
                           {"rawOutput": {"exit_code": "oops"}}))
    assert shell_record(state).output.exit_code == 2


@pytest.mark.parametrize("value", [None, True, "", "abc", 1.5, float("nan"), 2**40, [0]])
def test_absent_or_invalid_exit_never_becomes_zero(value: object) -> None:
    state = fold_all(_call({"status": "completed", "rawOutput": {"exit_code": value},
                            "_meta": {"terminal_exit": {"exit_code": value}}}))
    shown = shell_record(state)
    assert shown.output.exit_code is None
    assert shown.result == "unknown"


def test_exit_code_as_string_counts() -> None:
    state = fold_all(_call({"status": "completed", "rawOutput": {"exit_code": "0"}}))
    assert shell_record(state).output.exit_code == 0
    assert shell_record(state).result == "success"


def test_negative_exit_code_is_known_and_a_failure() -> None:
    state = fold_all(_call({"status": "completed", "rawOutput": {"exit_code": -1}}))
    shown = shell_record(state)
    assert shown.output.exit_code == -1
    assert (shown.status, shown.result) == ("failed", "failure")

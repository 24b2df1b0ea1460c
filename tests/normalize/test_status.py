"""Status and result derivation (the tables of shellexec.normalize.status)."""

from __future__ import annotations

import pytest

from shellexec.normalize.status import advance, shell_result, shell_status
from shellexec.normalize.vocabulary import Result, ShellStatus


@pytest.mark.parametrize(
    ("status", "exit_code", "result"),
    [
        ("pending", None, "running"),
        ("running", 2, "running"),
        ("complete", 0, "success"),
        ("complete", None, "unknown"),
        ("failed", 2, "failure"),
        ("failed", 0, "failure"),
        ("failed", None, "failure"),
        ("cancelled", None, "unknown"),
        ("cancelled", 0, "unknown"),
        ("cancelled", -1, "failure"),
    ],
)
def test_result_of_status_and_exit_code(
    status: ShellStatus, exit_code: int | None, result: Result
) -> None:
    assert shell_result(status, exit_code) == result


@pytest.mark.parametrize(
    ("reported", "cancelled", "exit_code", "status"),
    [
        ("complete", False, 2, "failed"),
        ("complete", False, -1, "failed"),
        ("complete", True, 0, "complete"),
        ("failed", False, 0, "failed"),
        ("running", True, None, "cancelled"),
        ("pending", True, None, "cancelled"),
        ("running", False, 1, "running"),
        ("cancelled", False, None, "cancelled"),
    ],
)
def test_public_status(
    reported: ShellStatus, cancelled: bool, exit_code: int | None, status: ShellStatus
) -> None:
    assert shell_status(reported, cancelled, exit_code) == status


@pytest.mark.parametrize(
    ("current", "reported", "after"),
    [
        ("pending", "running", "running"),
        ("running", "pending", "running"),
        ("running", "complete", "complete"),
        ("pending", "failed", "failed"),
        ("complete", "failed", "complete"),
        ("cancelled", "complete", "cancelled"),
        ("running", None, "running"),
    ],
)
def test_reported_status_only_moves_forward(
    current: ShellStatus, reported: ShellStatus | None, after: ShellStatus
) -> None:
    assert advance(current, reported) == after

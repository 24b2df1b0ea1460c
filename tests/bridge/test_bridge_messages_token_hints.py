"""What the bridge tells a user whose token the service refuses, per case: none given, one the
service does not know, one without the ingest scope, and one limited to tasks that do not
include the run's. The last was told to pass a token with the ingest scope, which it had;
what it needed was --task-id (without it, the bridge records into a new `bridge-…` task)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bridge.harness import Finished, run_bridge
from bridge.provider_scripts import say

from support.stack import Stack

pytestmark = pytest.mark.slow

SCRIPT = [{"update": say("done")}]
# A token of the service's form that no service issued.
UNKNOWN = "shx_" + "0" * 43


def _refused(secured: Stack, tmp_path: Path, token: str, *options: str) -> str:
    """The bridge's last line, of a run refused for its token (exit 2, no JSON line)."""
    finished: Finished = run_bridge(secured, tmp_path, SCRIPT, "--prompt", "hi", *options,
                                    env={"SHELLEXEC_TOKEN": token})
    assert finished.code == 2, finished.stderr
    assert finished.stdout == ""
    assert token == "" or token not in finished.stderr
    return finished.stderr.strip().splitlines()[-1]


def test_no_token(secured: Stack, tmp_path: Path) -> None:
    said = _refused(secured, tmp_path, "")
    assert "the service requires a token, and none was given" in said
    assert "set SHELLEXEC_TOKEN to a token with the ingest scope" in said


def test_a_token_the_service_does_not_know(secured: Stack, tmp_path: Path) -> None:
    said = _refused(secured, tmp_path, UNKNOWN)
    assert "the service refused the token" in said
    assert "the service does not know this token" in said
    assert "--task-id" not in said


def test_a_token_without_the_ingest_scope(secured: Stack, tmp_path: Path) -> None:
    """The reason SCOPE_MISSING: the hint is the scope's alone (it named the task and
    --task-id too, while only the code told the refusals apart)."""
    said = _refused(secured, tmp_path, secured.create_token("hint-read", "read"),
                    "--task-id", "build-1")
    assert "it needs the scope ingest" in said  # the service's own word
    assert "the token lacks the ingest scope" in said
    assert "--task-id" not in said


def test_a_token_limited_to_other_tasks_without_task_id_names_the_task_and_task_id(
        secured: Stack, tmp_path: Path) -> None:
    said = _refused(secured, tmp_path,
                    secured.create_token("hint-repo", "ingest", tasks="repo-*"))
    task = re.search(r"this run's task '(bridge-[0-9a-f]{12})'", said)
    assert task is not None, said
    assert f"this token may not create sessions of task {task[1]!r}" in said
    assert "without --task-id the bridge records into a new task, bridge-<random>" in said
    assert "pass --task-id with a task the token covers" in said
    assert "ingest scope" not in said  # the reason TASK_NOT_COVERED: the token has it


def test_a_token_limited_to_other_tasks_names_the_task_id_given(secured: Stack,
                                                                tmp_path: Path) -> None:
    said = _refused(secured, tmp_path,
                    secured.create_token("hint-repo-2", "ingest", tasks="repo-*"),
                    "--task-id", "build-2")
    assert "this run's task 'build-2'" in said
    assert "pass --task-id with a task the token covers" in said
    assert "bridge-<random>" not in said

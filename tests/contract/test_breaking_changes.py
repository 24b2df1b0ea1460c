"""`make breaking` (in `make test`) guards the contract: `buf breaking` compares proto/ with
the released contract recorded in proto/baseline.binpb (ADR 0101). These tests prove that the
guard bites: a copy of the protos with a renamed field or a removed method fails the check, an
additive change passes, and today's proto/ matches the baseline's promises."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / ".tools" / "node_modules" / ".bin" / "buf"
BASELINE = ROOT / "proto" / "baseline.binpb"
SESSION = Path("proto/shellexec/v1/session.proto")
SERVICE = Path("proto/shellexec/v1/shell_exec_service.proto")
Edit = Callable[[str], str]


def breaking(workspace: Path) -> subprocess.CompletedProcess[str]:
    if not BUF.exists():
        pytest.fail(f"{BUF} is missing: `make lint-proto` installs buf")
    return subprocess.run([str(BUF), "breaking", "proto", "--against", str(BASELINE)],
                          cwd=workspace, capture_output=True, text=True, timeout=60)


def edited_copy(tmp_path: Path, file: Path, edit: Edit) -> Path:
    """A copy of the buf workspace with `edit` applied to `file` (which it must change)."""
    for name in ("buf.yaml", "proto", "third_party"):
        source = ROOT / name
        copy = shutil.copytree if source.is_dir() else shutil.copy
        copy(source, tmp_path / name)
    text = (tmp_path / file).read_text()
    changed = edit(text)
    assert changed != text, "the edit changed nothing"
    (tmp_path / file).write_text(changed)
    return tmp_path


def rename_task_id(text: str) -> str:
    return text.replace("string task_id = 2", "string task_ref = 2")


def remove_delete_task(text: str) -> str:
    return re.sub(r"\n  rpc DeleteTask\(.*?\n  }\n", "\n", text, flags=re.DOTALL)


def add_a_field(text: str) -> str:
    return text.replace("message Turn {", "message Turn {\n  // Added.\n  string note = 99;", 1)


def test_the_contract_keeps_the_baseline_s_promises() -> None:
    result = breaking(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("file", "edit", "complaint"), [
    (SESSION, rename_task_id, 'changed name from "task_id" to "task_ref"'),
    (SERVICE, remove_delete_task, 'RPC "DeleteTask" on service "ShellExecService" was deleted'),
])
def test_a_breaking_change_fails_the_check(tmp_path: Path, file: Path, edit: Edit,
                                           complaint: str) -> None:
    result = breaking(edited_copy(tmp_path, file, edit))
    assert result.returncode != 0
    assert complaint in result.stdout


def test_an_additive_change_passes(tmp_path: Path) -> None:
    result = breaking(edited_copy(tmp_path, SESSION, add_a_field))
    assert result.returncode == 0, result.stdout + result.stderr

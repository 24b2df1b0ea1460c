"""`fs/read_text_file` and `fs/write_text_file`, asked by the fake agent: refused unless
enabled, and then confined to the --cwd tree."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from bridge.harness import Step, run_bridge

from support.stack import Stack

pytestmark = pytest.mark.slow

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002


def _code(result: dict[str, Any]) -> int:
    code: int = result["error"]["code"]
    return code


def test_file_requests_are_refused_and_not_advertised_by_default(stack: Stack,
                                                                 tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("private\n")
    script = [{"read_file": {"path": str(tmp_path / "notes.txt")}},
              {"write_file": {"path": str(tmp_path / "new.txt"), "content": "x"}}]
    finished = run_bridge(stack, tmp_path, script, "--prompt", "Read my notes.")

    assert finished.code == 0, finished.stderr
    assert [_code(r) for r in finished.record["files"]] == [METHOD_NOT_FOUND, METHOD_NOT_FOUND]
    assert not (tmp_path / "new.txt").exists()
    fs = finished.record["initialize"]["clientCapabilities"].get("fs", {})
    assert fs.get("readTextFile", False) is False
    assert fs.get("writeTextFile", False) is False


def test_enabled_file_requests_stay_inside_the_working_directory(stack: Stack,
                                                                 tmp_path: Path) -> None:
    workdir = tmp_path / "project"
    (workdir / "src").mkdir(parents=True)
    (workdir / "src" / "app.py").write_text("one\ntwo\nthree\nfour\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    os.symlink(tmp_path / "outside.txt", workdir / "link.txt")
    script: list[Step] = [
        {"read_file": {"path": str(workdir / "src" / "app.py")}},
        {"read_file": {"path": str(workdir / "src" / "app.py"), "line": 2, "limit": 2}},
        {"write_file": {"path": str(workdir / "out" / "result.txt"), "content": "done\n"}},
        {"read_file": {"path": str(tmp_path / "outside.txt")}},
        {"read_file": {"path": str(workdir / ".." / "outside.txt")}},
        {"read_file": {"path": str(workdir / "link.txt")}},
        {"write_file": {"path": str(tmp_path / "escape.txt"), "content": "x"}},
        {"read_file": {"path": "src/app.py"}},
        {"read_file": {"path": str(workdir / "missing.txt")}},
    ]
    finished = run_bridge(stack, workdir, script, "--allow-fs-read", "--allow-fs-write",
                          "--prompt", "Edit my project.")

    assert finished.code == 0, finished.stderr
    files = finished.record["files"]
    assert files[0] == {"content": "one\ntwo\nthree\nfour\n"}
    assert files[1] == {"content": "two\nthree\n"}
    assert files[2] == {"written": str(workdir / "out" / "result.txt")}
    assert (workdir / "out" / "result.txt").read_text() == "done\n"
    assert [_code(r) for r in files[3:8]] == [INVALID_PARAMS] * 5
    assert _code(files[8]) == RESOURCE_NOT_FOUND
    assert not (tmp_path / "escape.txt").exists()
    fs = finished.record["initialize"]["clientCapabilities"]["fs"]
    assert fs == {"readTextFile": True, "writeTextFile": True}

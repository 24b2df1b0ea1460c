"""clients/go/README.md is true: a new Go module that follows its Install section and runs its
example against a real server prints what the page says."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from support.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "clients" / "go" / "README.md").read_text()

pytestmark = pytest.mark.slow  # resolves and builds a new module


def _blocks(language: str) -> list[str]:
    found = re.findall(rf"^```{language}\n(.*?)^```", README, re.M | re.S)
    assert found, f"no {language} block"
    return found


def test_a_new_module_follows_the_readme(stack: Stack, tmp_path: Path) -> None:
    """Each block in the page's order, in an empty folder, and nothing else: the page once
    left out the second `go mod tidy`, and then `go mod init`, which this test ran by
    itself."""
    env = {**os.environ, "SHELLEXEC": str(ROOT), "SHELLEXEC_GRPC_ADDRESS": stack.grpc_target}
    install, run = _blocks("sh")[:2]  # Install's, then the Example's
    program = _blocks("go")[0]  # the Example (later blocks are fragments)
    subprocess.run(["bash", "-euc", install], cwd=tmp_path, env=env, check=True)
    (tmp_path / "main.go").write_text(program)
    ran = subprocess.run(["bash", "-euc", run], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr
    printed = re.search(r"It prints `([^`]*)`", README)
    assert printed
    assert ran.stdout == printed.group(1) + "\n"

"""clients/java/README.md is true: installing the client as its Install section says, then
saving its example program and build file in an empty folder and running its command against
a real server, prints what the page says.

The page once gave a fragment (no imports, no class, no build file, no command), and a
newcomer had to guess the rest.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
JAVA_CLIENT = ROOT / "clients" / "java"
README = (JAVA_CLIENT / "README.md").read_text()

pytestmark = pytest.mark.slow  # builds the client and a new Maven project


def _section(heading: str) -> str:
    found = re.search(rf"^## {heading}\n(.*?)(?=^## )", README, re.M | re.S)
    assert found, f"no {heading} section"
    return found.group(1)


def _blocks(text: str, language: str) -> list[str]:
    found = re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)
    assert found, f"no {language} block"
    return found


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout with the client installed by the Install section's block, run as it stands.

    The block builds in the checkout's clients/java/target, where test_conformance_java.py
    builds and runs its probes, maybe at the same time on the other worker of `make test`: so
    it runs in a copy of clients/java (what the page's commands use of the checkout). It puts
    the same com.shellexec:shellexec-client:0.1.0 in ~/.m2 as it does from the checkout.
    """
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(JAVA_CLIENT, root / "clients" / "java",
                    ignore=shutil.ignore_patterns("target"))
    (install,) = _blocks(_section("Install"), "sh")
    subprocess.run(["bash", "-euc", install], cwd=tmp_path_factory.mktemp("elsewhere"),
                   env={**os.environ, "SHELLEXEC": str(root)}, check=True, timeout=600)
    return root


def test_a_new_project_follows_the_readme(checkout: Path, stack: Stack, tmp_path: Path) -> None:
    """The Example's blocks in order, in an empty folder: each file saved where the sentence
    after it says, then the command."""
    example = _section("Example")
    files = re.findall(r"^```(?:java|xml)\n(.*?)^```", example, re.M | re.S)
    saved_as = re.findall(r"^Save it as `([^`]+)`", example, re.M)
    assert len(saved_as) == len(files) == 2
    for name, text in zip(saved_as, files, strict=True):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (run,) = _blocks(example, "sh")
    env = {**os.environ, "SHELLEXEC": str(checkout),
           "SHELLEXEC_GRPC_ADDRESS": stack.grpc_target}
    ran = subprocess.run(["bash", "-euc", run], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-4000:]
    printed = re.search(r"It prints `([^`]*)`", example)
    assert printed
    assert ran.stdout == printed.group(1) + "\n"

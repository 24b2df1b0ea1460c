"""The TypeScript client runs on the Node its package and README name: every package it
installs for its users (its dependencies, not the tools that build it) accepts that Node.
`@connectrpc/connect-node` 2.2 and later need Node 22, and npm warned, or with
`engine-strict` refused, on Node 20."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"


def _oldest_node(range_text: str) -> int:
    """The oldest major version of Node that a package's `engines.node` accepts, for ranges
    of `>=N.x.y`, `^N` or `N` alternatives (`||`)."""
    majors = []
    for alternative in range_text.split("||"):
        found = re.match(r"\s*(?:>=|\^|~|=)?\s*v?(\d+)", alternative)
        assert found, range_text
        majors.append(int(found.group(1)))
    return min(majors)


def test_the_oldest_node_of_a_range_is_its_lowest_major() -> None:
    assert [_oldest_node(text) for text in (">=18.14.1", ">=22", "^20 || >=22", "20.x")] == [
        18, 22, 20, 20]


def _installed(tree: dict[str, Any]) -> set[str]:
    names = set()
    for name, node in tree.get("dependencies", {}).items():
        names.add(name)
        names |= _installed(node)
    return names


def test_every_dependency_accepts_the_node_the_package_names() -> None:
    package = json.loads((PACKAGE / "package.json").read_text())
    promised = _oldest_node(package["engines"]["node"])
    assert f"Node {promised} or later" in (PACKAGE / "README.md").read_text()
    listed = subprocess.run(["npm", "ls", "--omit=dev", "--all", "--json"], cwd=PACKAGE,
                            capture_output=True, text=True, check=True)
    for name in sorted(_installed(json.loads(listed.stdout))):
        engines = json.loads((PACKAGE / "node_modules" / name / "package.json").read_text()
                             ).get("engines", {})
        if "node" in engines:
            assert _oldest_node(engines["node"]) <= promised, (name, engines["node"])

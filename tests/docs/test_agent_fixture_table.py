"""The per-agent table of docs/normalization.md names the recorded sequences: every fixture in
tests/fixtures/acp (and not-shell/) is named in it, and every name in it is a fixture, so a
fixture added, renamed or removed without the table fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "normalization.md"
FIXTURES = ROOT / "tests" / "fixtures" / "acp"
_HEADING = "## Per agent: the fields read, and the fixtures that show them"
_NAME = re.compile(r"`((?:not-shell/)?[a-z]+-[a-z0-9-]+)`")


def _named() -> set[str]:
    section = DOC.read_text().split(_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [line.rsplit(" | ", 1)[1] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| ---")][1:]
    return {name for row in rows for name in _NAME.findall(row)}


def _fixtures() -> set[str]:
    return {str(path.relative_to(FIXTURES).with_suffix(""))
            for path in FIXTURES.rglob("*.jsonl")}


def test_every_fixture_is_named_in_the_per_agent_table() -> None:
    assert sorted(_fixtures() - _named()) == []


def test_every_name_in_the_per_agent_table_is_a_fixture() -> None:
    assert sorted(_named() - _fixtures()) == []

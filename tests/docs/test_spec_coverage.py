"""The coverage table of docs/spec-summary.md names real tests: every row of the specification's
rules and scenarios names at least one, and each one named exists (a Python test function, or
a `test('title', ...)` of the page's unit tests), so renaming or removing a test fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "docs" / "spec-summary.md"
# | W1 | rule text | `tests/x.py::test_y`, `web/test/z.test.mjs::a title` |
_ROW = re.compile(r"^\| ([WDAFPS][0-9]+) \| (.+?) \| (.+) \|$")
_REFERENCE = re.compile(r"`([^`:]+)::([^`]+)`")
# The specification's scenarios: S1 to S16, in its order.
SCENARIOS = 16


def coverage_rows() -> list[tuple[str, list[tuple[str, str]]]]:
    section = SUMMARY.read_text().split("## Coverage:", 1)[1].split("\n## ", 1)[0]
    return [(match[1], _REFERENCE.findall(match[3])) for line in section.splitlines()
            if (match := _ROW.match(line))]


def defines(path: Path, name: str) -> bool:
    source = path.read_text()
    if path.suffix == ".py":
        return re.search(rf"^def {re.escape(name)}\(", source, re.MULTILINE) is not None
    return f"test('{name}'" in source


def test_every_row_has_an_id_once_and_names_a_test() -> None:
    rows = coverage_rows()
    ids = [row_id for row_id, _ in rows]
    assert len(ids) == len(set(ids)), "an id is used twice"
    assert [row_id for row_id, references in rows if not references] == []


def test_every_scenario_of_the_specification_has_a_row() -> None:
    scenarios = [row_id for row_id, _ in coverage_rows() if row_id.startswith("S")]
    assert scenarios == [f"S{number}" for number in range(1, SCENARIOS + 1)]


def test_every_test_the_table_names_exists() -> None:
    missing = [f"{file}::{name}" for _, references in coverage_rows()
               for file, name in references
               if not (ROOT / file).is_file() or not defines(ROOT / file, name)]
    assert missing == []

"""docs/adr/README.md lists every decision record once, by its number, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

ADR_DIR = Path(__file__).resolve().parents[2] / "docs" / "adr"
# | 0001 | [title](0001-some-name.md) | one sentence. |
_ROW = re.compile(r"^\| (\d{4}) \| \[[^\]]+\]\((\d{4}-[a-z0-9-]+\.md)\) \| (.+?) \|$")


def index_rows() -> list[tuple[str, str, str]]:
    text = (ADR_DIR / "README.md").read_text()
    return [(match[1], match[2], match[3]) for line in text.splitlines()
            if (match := _ROW.match(line))]


def test_every_record_is_listed_once_and_every_listed_record_exists() -> None:
    records = sorted(path.name for path in ADR_DIR.glob("[0-9][0-9][0-9][0-9]-*.md"))
    listed = [name for _, name, _ in index_rows()]
    assert sorted(set(listed)) == sorted(listed), "a record is listed twice"
    assert [name for name in records if name not in listed] == [], "not in the index"
    assert [name for name in listed if name not in records] == [], "listed but missing"


def test_each_line_gives_the_records_number_and_a_summary() -> None:
    rows = index_rows()
    assert rows
    for number, name, summary in rows:
        assert name.startswith(number + "-"), name
        assert summary.endswith("."), name

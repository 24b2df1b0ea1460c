"""README.md's layout table names every package of the server."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_layout_table_lists_every_server_package() -> None:
    readme = (ROOT / "README.md").read_text()
    packages = sorted(path.parent.name for path in (ROOT / "server" / "shellexec").glob(
        "*/__init__.py"))
    assert packages
    missing = [name for name in packages if f"| `server/shellexec/{name}/` |" not in readme]
    assert missing == []

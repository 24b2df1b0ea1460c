"""Review 9: a write whose directory was swapped for a symlink after the path check is refused
(ADR 0122), but only after `os.open(..., O_CREAT)` and `mkdir(parents=True)` have run through
the link: the refused write leaves a new empty file, and new directories, outside the root.
The tests hand `_write_text` the path as it is after such a swap, as test_file_open_guard.py
does for `_open_regular`."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellexec.bridge.files import EscapedRootError, _write_text

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    inside = tmp_path / "root"
    inside.mkdir()
    (tmp_path / "outside").mkdir()
    (inside / "dir").symlink_to(tmp_path / "outside")  # the swap, after the path was checked
    return inside


def test_a_refused_write_creates_no_file_outside_the_root(root: Path) -> None:
    with pytest.raises(EscapedRootError):
        _write_text(root / "dir" / "new.txt", root, "content")
    assert list((root.parent / "outside").iterdir()) == []


def test_a_refused_write_creates_no_directory_outside_the_root(root: Path) -> None:
    with pytest.raises(EscapedRootError):
        _write_text(root / "dir" / "made" / "new.txt", root, "content")
    assert list((root.parent / "outside").iterdir()) == []

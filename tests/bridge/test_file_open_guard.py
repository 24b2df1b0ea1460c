"""The last guard of a file request: the file is reached from the bridge's root one name at a
time, following no symlink. The path was resolved and checked before, but a directory on it
can be swapped for a symlink in between; these tests hand the guard the path as it is after
such a swap, and nothing may be read, written or created outside the root (ADR 0122)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shellexec.bridge.files import (
    EscapedRootError,
    PathThroughFileError,
    _open_regular,
    _write_text,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    inside = tmp_path / "root"
    (inside / "dir").mkdir(parents=True)
    (inside / "dir" / "notes.txt").write_text("inside\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "notes.txt").write_text("secret\n")
    return inside


def test_a_file_inside_the_root_is_opened(root: Path) -> None:
    descriptor = _open_regular(root / "dir" / "notes.txt", root, os.O_RDONLY)
    with open(descriptor) as opened:
        assert opened.read() == "inside\n"


def test_a_directory_swapped_for_a_link_outside_is_refused(root: Path) -> None:
    (root / "dir" / "notes.txt").unlink()
    (root / "dir").rmdir()
    (root / "dir").symlink_to(root.parent / "outside")  # the swap, after the path was checked
    with pytest.raises(EscapedRootError):
        _open_regular(root / "dir" / "notes.txt", root, os.O_RDONLY)


def test_a_file_swapped_for_a_link_is_refused_and_not_written(root: Path) -> None:
    target = root / "dir" / "notes.txt"
    target.unlink()
    target.symlink_to(root.parent / "outside" / "notes.txt")
    with pytest.raises(EscapedRootError):
        _open_regular(target, root, os.O_WRONLY | os.O_CREAT)
    assert (root.parent / "outside" / "notes.txt").read_text() == "secret\n"


@pytest.mark.parametrize("relative", ["new.txt", "made/deeper/new.txt"])
def test_a_write_through_a_swapped_directory_creates_nothing_outside(root: Path,
                                                                     relative: str) -> None:
    (root / "dir" / "notes.txt").unlink()
    (root / "dir").rmdir()
    (root / "dir").symlink_to(root.parent / "outside")
    with pytest.raises(EscapedRootError):
        _write_text(root / "dir" / relative, root, b"content")
    assert [path.name for path in (root.parent / "outside").iterdir()] == ["notes.txt"]


def test_a_write_inside_makes_its_directories_and_the_file(root: Path) -> None:
    _write_text(root / "dir" / "made" / "new.txt", root, b"content")
    assert (root / "dir" / "made" / "new.txt").read_text() == "content"


@pytest.mark.parametrize("flags", [os.O_RDONLY, os.O_WRONLY | os.O_CREAT])
def test_a_path_through_a_file_is_refused_as_such(root: Path, flags: int) -> None:
    """`dir/notes.txt/x` names nothing: it was refused as outside the working directory, the
    reason of a symlink leading out."""
    with pytest.raises(PathThroughFileError):
        _open_regular(root / "dir" / "notes.txt" / "x", root, flags)
    assert (root / "dir" / "notes.txt").read_text() == "inside\n"

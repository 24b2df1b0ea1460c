"""`fs/read_text_file` and `fs/write_text_file`: refused unless enabled, then confined.

The bridge advertises `fs.readTextFile` / `fs.writeTextFile` only when `--allow-fs-read` /
`--allow-fs-write` is given, so a well-behaved agent never asks otherwise; one that asks anyway
gets "method not found". An enabled request must name a path inside the `--cwd` tree after
symlinks are resolved, so `../` or a link cannot reach the rest of the disk.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from acp.exceptions import RequestError

READ_METHOD = "fs/read_text_file"
WRITE_METHOD = "fs/write_text_file"


class FileAccess:
    """The file-system policy of one bridge run, rooted at the ACP session's cwd."""

    def __init__(self, root: Path, *, read: bool, write: bool) -> None:
        self._root = Path(os.path.realpath(root))
        self.read_enabled = read
        self.write_enabled = write

    async def read(self, path: str, line: int | None, limit: int | None) -> str:
        """The file's text from 1-based `line`, at most `limit` lines."""
        if not self.read_enabled:
            raise RequestError.method_not_found(READ_METHOD)
        target = self._confined(path)
        try:
            text = await asyncio.to_thread(target.read_text, encoding="utf-8")
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except (OSError, UnicodeDecodeError) as error:
            raise RequestError.internal_error({"path": path, "reason": str(error)}) from None
        return _slice_lines(text, line, limit)

    async def write(self, path: str, content: str) -> None:
        """Writes `content` to the file, creating it and its directories inside the root."""
        if not self.write_enabled:
            raise RequestError.method_not_found(WRITE_METHOD)
        target = self._confined(path)
        try:
            await asyncio.to_thread(_write_text, target, content)
        except OSError as error:
            raise RequestError.internal_error({"path": path, "reason": str(error)}) from None

    def _confined(self, path: str) -> Path:
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": path, "reason": "must be absolute"})
        resolved = Path(os.path.realpath(path))
        if not resolved.is_relative_to(self._root):
            raise RequestError.invalid_params(
                {"path": path, "reason": "outside the bridge's working directory"})
        return resolved


def _slice_lines(text: str, line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = None if limit is None else start + limit
    return "".join(lines[start:end])


def _write_text(target: Path, content: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")

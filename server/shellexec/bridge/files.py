"""`fs/read_text_file` and `fs/write_text_file`: refused unless enabled, then confined.

The bridge advertises `fs.readTextFile` / `fs.writeTextFile` only when `--allow-fs-read` /
`--allow-fs-write` is given, so a well-behaved agent never asks otherwise; one that asks anyway
gets "method not found". An enabled request must name a path inside the `--cwd` tree after
symlinks are resolved, so `../` or a link cannot reach the rest of the disk, and a regular file
there: a FIFO nobody writes (or reads) would block a worker thread for ever, and the bridge
could not exit (ADR 0122). A read streams the file and stops at the lines asked for
(`line_window`), so a one-line read of a huge file costs one chunk.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from pathlib import Path

from acp.exceptions import RequestError

from shellexec.bridge.line_window import MAX_READ_BYTES, LineWindow, WindowTooLargeError

READ_METHOD = "fs/read_text_file"
WRITE_METHOD = "fs/write_text_file"
_READ_CHARS = 64 * 1024
# Non-blocking, so that opening a FIFO cannot wait for its other end; it makes no difference
# to a regular file, the only kind served.
_OPEN_FLAGS = os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_NOT_REGULAR = "not a regular file"


class NotRegularFileError(Exception):
    """The path names a directory, FIFO, socket or device."""


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
        window = LineWindow(line, limit, MAX_READ_BYTES)
        try:
            await asyncio.to_thread(_read_into, target, window)
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except NotRegularFileError:
            raise RequestError.invalid_params({"path": path, "reason": _NOT_REGULAR}) from None
        except WindowTooLargeError as error:
            raise RequestError.invalid_params({"limit": limit, "reason": str(error)}) from None
        except (OSError, UnicodeDecodeError) as error:
            raise RequestError.internal_error({"path": path, "reason": str(error)}) from None
        return window.text()

    async def write(self, path: str, content: str) -> None:
        """Writes `content` to the file, creating it and its directories inside the root."""
        if not self.write_enabled:
            raise RequestError.method_not_found(WRITE_METHOD)
        target = self._confined(path)
        try:
            await asyncio.to_thread(_write_text, target, content)
        except NotRegularFileError:
            raise RequestError.invalid_params({"path": path, "reason": _NOT_REGULAR}) from None
        except OSError as error:
            raise RequestError.internal_error({"path": path, "reason": str(error)}) from None

    def _confined(self, path: str) -> Path:
        if "\0" in path:  # the OS would refuse it with a ValueError
            raise RequestError.invalid_params({"path": path, "reason": "contains a NUL byte"})
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": path, "reason": "must be absolute"})
        resolved = Path(os.path.realpath(path))
        if not resolved.is_relative_to(self._root):
            raise RequestError.invalid_params(
                {"path": path, "reason": "outside the bridge's working directory"})
        return resolved


def _read_into(target: Path, window: LineWindow) -> None:
    """Feeds the file's text to `window` until it has its lines or the file ends."""
    descriptor = _open_regular(target, os.O_RDONLY)
    with open(descriptor, encoding="utf-8") as text:
        while not window.complete and (chunk := text.read(_READ_CHARS)):
            window.feed(chunk)


def _write_text(target: Path, content: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = _open_regular(target, os.O_WRONLY | os.O_CREAT)
    with open(descriptor, "w", encoding="utf-8") as text:
        os.ftruncate(descriptor, 0)  # only once it is known to be a regular file
        text.write(content)


def _open_regular(target: Path, flags: int) -> int:
    """A descriptor of `target` if it is a regular file; raises NotRegularFileError."""
    try:
        descriptor = os.open(target, flags | _OPEN_FLAGS, 0o666)
    except OSError as error:
        # EISDIR: a directory opened for writing; ENXIO: a FIFO without a reader.
        if error.errno in (errno.EISDIR, errno.ENXIO):
            raise NotRegularFileError from None
        raise
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise NotRegularFileError
    return descriptor

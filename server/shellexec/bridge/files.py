"""`fs/read_text_file` and `fs/write_text_file`: refused unless enabled, then confined.

The bridge advertises `fs.readTextFile` / `fs.writeTextFile` only when `--allow-fs-read` /
`--allow-fs-write` is given, so a well-behaved agent never asks otherwise; one that asks anyway
gets "method not found". An enabled request must name a path inside the `--cwd` tree after
symlinks are resolved, so `../` or a link cannot reach the rest of the disk, and a regular file
there: a FIFO nobody writes (or reads) would block a worker thread for ever, and the bridge
could not exit (ADR 0122). The file is then reached from the root one name at a time,
following no symlink, so a directory swapped for a symlink between the check and the open
cannot lead a read, a write or a new directory outside. A read streams the file and stops at
the lines asked for (`line_window`), so a one-line read of a huge file costs one chunk.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from pathlib import Path

from acp.exceptions import RequestError

from shellexec.bridge.line_window import MAX_READ_BYTES, LineWindow, WindowTooLargeError
from shellexec.bridge.os_text import quoted_start, refuse_what_the_os_cannot_take

READ_METHOD = "fs/read_text_file"
WRITE_METHOD = "fs/write_text_file"
_READ_CHARS = 64 * 1024
# Non-blocking, so that opening a FIFO cannot wait for its other end; it makes no difference
# to a regular file, the only kind served.
_OPEN_FLAGS = os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
# A directory on the way to the file, never through a symlink.
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOT_REGULAR = "not a regular file"
_OUTSIDE = "outside the bridge's working directory"
_THROUGH_FILE = "goes through a file as if it were a directory"


class RefusedPathError(Exception):
    """A path found unservable on the way to its file; `reason` is what the agent is told."""

    reason = ""


class NotRegularFileError(RefusedPathError):
    """The path names a directory, FIFO, socket or device."""

    reason = _NOT_REGULAR


class PathThroughFileError(RefusedPathError):
    """A name on the path, before its last, is a file where a directory would be."""

    reason = _THROUGH_FILE


class EscapedRootError(RefusedPathError):
    """The file lies outside the root after all: a directory on its path was swapped for a
    symlink between the check and the open."""

    reason = _OUTSIDE


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
            await asyncio.to_thread(_read_into, target, self._root, window)
        except FileNotFoundError:
            raise RequestError.resource_not_found(quoted_start(path)) from None
        except RefusedPathError as error:
            raise RequestError.invalid_params({"path": quoted_start(path),
                                               "reason": error.reason}) from None
        except WindowTooLargeError as error:
            raise RequestError.invalid_params({"limit": limit, "reason": str(error)}) from None
        except (OSError, UnicodeDecodeError) as error:
            raise RequestError.internal_error({"path": quoted_start(path),
                                               "reason": _why(error)}) from None
        return window.text()

    async def write(self, path: str, content: str) -> None:
        """Writes `content` to the file, creating it and its directories inside the root."""
        if not self.write_enabled:
            raise RequestError.method_not_found(WRITE_METHOD)
        target = self._confined(path)
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: valid JSON, no UTF-8
            raise RequestError.invalid_params({
                "content": "...", "reason": "holds a lone surrogate (half of a UTF-16 pair), "
                                            "which no UTF-8 file can hold"}) from None
        try:
            await asyncio.to_thread(_write_text, target, self._root, data)
        except RefusedPathError as error:
            raise RequestError.invalid_params({"path": quoted_start(path),
                                               "reason": error.reason}) from None
        except OSError as error:
            raise RequestError.internal_error({"path": quoted_start(path),
                                               "reason": _why(error)}) from None

    def _confined(self, path: str) -> Path:
        refuse_what_the_os_cannot_take([("path", path)])
        if not os.path.isabs(path):
            raise RequestError.invalid_params({"path": quoted_start(path),
                                               "reason": "must be absolute"})
        resolved = Path(os.path.realpath(path))
        if not resolved.is_relative_to(self._root):
            raise RequestError.invalid_params({"path": quoted_start(path), "reason": _OUTSIDE})
        return resolved


def _why(error: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be served: the system's reason without the name it failed on (a
    name on the agent's path, which the answer quotes by its start already), or the decoder's
    complaint."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)


def _read_into(target: Path, root: Path, window: LineWindow) -> None:
    """Feeds the file's text to `window`, line endings as the file holds them (an agent that
    edits a CRLF file and writes it back must keep its `\r\n`), until it has its lines or the
    file ends."""
    descriptor = _open_regular(target, root, os.O_RDONLY)
    with open(descriptor, encoding="utf-8", newline="") as text:
        while not window.complete and (chunk := text.read(_READ_CHARS)):
            window.feed(chunk)


def _write_text(target: Path, root: Path, data: bytes) -> None:
    """Writes `data`, encoded before anything is opened: a write that could not be encoded
    used to empty the file first."""
    descriptor = _open_regular(target, root, os.O_WRONLY | os.O_CREAT, make_directories=True)
    with open(descriptor, "wb") as file:
        os.ftruncate(descriptor, 0)  # only once it is known to be a regular file
        file.write(data)


def _open_regular(target: Path, root: Path, flags: int, *,
                  make_directories: bool = False) -> int:
    """A descriptor of `target` (resolved, inside `root`) if it is a regular file; raises
    NotRegularFileError, or EscapedRootError when a symlink is met on the way.

    The path was resolved and checked before, but a directory on it may have been swapped for
    a symlink since. So the walk goes from `root` one name at a time, relative to the
    directory before (`dir_fd`) and following no symlink: nothing is opened, and no directory
    or file is created, anywhere but inside `root`.
    """
    if target == root:
        raise NotRegularFileError
    *directories, name = target.relative_to(root).parts
    parent = os.open(root, _DIRECTORY_FLAGS)
    try:
        for directory in directories:
            if make_directories:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(directory, dir_fd=parent)
            child = _open_at(parent, directory, _DIRECTORY_FLAGS)
            os.close(parent)
            parent = child
        descriptor = _open_at(parent, name, flags | _OPEN_FLAGS | os.O_NOFOLLOW)
    finally:
        os.close(parent)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise NotRegularFileError
    return descriptor


def _open_at(parent: int, name: str, flags: int) -> int:
    try:
        return os.open(name, flags, 0o666, dir_fd=parent)
    except OSError as error:
        # ENOTDIR: a symlink or a file where a directory was; only a symlink may lead out.
        if error.errno == errno.ENOTDIR and not _is_symlink(parent, name):
            raise PathThroughFileError from None
        # ELOOP: a symlink (O_NOFOLLOW).
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise EscapedRootError from None
        # EISDIR: a directory opened for writing; ENXIO: a FIFO without a reader.
        if error.errno in (errno.EISDIR, errno.ENXIO):
            raise NotRegularFileError from None
        raise


def _is_symlink(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return True  # gone meanwhile: refused as the swap it may have been

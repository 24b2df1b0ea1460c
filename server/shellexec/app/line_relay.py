"""A child's output passed on to ours a whole line per write.

`up` gives the server's log and Envoy's access log one stderr. Envoy writes its log in pieces:
a flush writes its buffer a slice at a time, and a slice may end inside a line. A server line
written between two pieces landed inside an Envoy line, and neither was JSON any more (about
one line in a thousand under load). So Envoy writes to a pipe, and a thread of ours copies it
to our stderr, each complete line with one `write`, as the server writes each of its own:
a write to a file is never split by another's, nor one of up to 4 KiB to a pipe.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import IO, Final

# What is read at once; a line longer than this is gathered over several reads.
READ_BYTES: Final = 64 * 1024
# A "line" that has no end by this size is passed on as it is: nothing Envoy writes is this
# long, and the relay must not hold an unbounded amount.
MAX_LINE_BYTES: Final = 1024 * 1024


def relay_lines(source: IO[bytes], write: Callable[[bytes], object]) -> None:
    """Copies `source` to `write` until its end, one complete line per call (the rest of an
    unfinished last line is ended with a newline). A failing `write` loses those lines and
    nothing else: the source is read to its end, so its writer never blocks on a full pipe."""
    pending = b""
    with source:
        while chunk := os.read(source.fileno(), READ_BYTES):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                _deliver(write, line + b"\n")
            if len(pending) >= MAX_LINE_BYTES:
                _deliver(write, pending + b"\n")
                pending = b""
    if pending:
        _deliver(write, pending + b"\n")


def _deliver(write: Callable[[bytes], object], line: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):  # a closed or broken stderr
        write(line)


def write_all_to(fd: int | None) -> Callable[[bytes], object]:
    """A writer of whole buffers to `fd` (None: a stderr that was closed, so nothing)."""
    def write(data: bytes) -> None:
        if fd is None:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    return write


def start(source: IO[bytes], fd: int | None) -> threading.Thread:
    """Relays `source` to `fd` from a daemon thread, which ends with the source."""
    thread = threading.Thread(target=relay_lines, args=(source, write_all_to(fd)),
                              name="output-relay", daemon=True)
    thread.start()
    return thread

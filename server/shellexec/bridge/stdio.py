"""The bridge's own stdin, stdout and stderr, which its user may have closed, or whose reader
may go away while it runs (`2> >(head -c 200)`, a log shipper that died, `| head -0`).

- A descriptor 0, 1 or 2 closed when the bridge starts (`<&-`, `>&-`, `2>&-`) is opened on
  /dev/null, so that no pipe, socket or file the bridge opens later takes its number: a socket
  on descriptor 2 would receive gRPC's own log lines. Python has then set `sys.stdin`,
  `sys.stdout` or `sys.stderr` to None, which is how the bridge tells it was closed.
- stderr carries the log and the agent's relayed stderr (`Stderr`). Once a write to it fails,
  nothing more is written there for the rest of the run, and its descriptor is pointed at
  /dev/null, so that neither gRPC's own lines nor the interpreter's last flush fail on it. The
  run goes on: its record does not depend on its log.
- stdout carries the result line (`print_line`). When the line cannot be printed, the caller
  says so on stderr; the exit status stays the run's.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import BinaryIO, TextIO

STANDARD_DESCRIPTORS = (0, 1, 2)


def open_closed_descriptors() -> None:
    """Opens /dev/null on each of descriptors 0, 1 and 2 that is closed."""
    for descriptor in STANDARD_DESCRIPTORS:
        try:
            os.fstat(descriptor)
        except OSError:
            _null_onto(descriptor, os.O_RDONLY if descriptor == 0 else os.O_WRONLY)


def _null_onto(descriptor: int, flags: int) -> None:
    null = os.open(os.devnull, flags)
    if null != descriptor:
        os.dup2(null, descriptor)  # inheritable, as a standard descriptor is
        os.close(null)
    else:  # it took the closed number itself
        os.set_inheritable(null, True)


def _silence(stream: BinaryIO | TextIO) -> None:
    """Points the descriptor under `stream` at /dev/null: what its buffer still holds, and
    whatever else writes there later, is then written without failing."""
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):  # not a file (a test's capture), or closed
        return
    with contextlib.suppress(OSError):
        _null_onto(descriptor, os.O_WRONLY)


class Stderr:
    """The bridge's stderr, written in bytes, each write flushed; a write that fails (the reader
    went away, a full disk) ends its writing for the run, quietly (module docstring)."""

    def __init__(self, stream: BinaryIO | None) -> None:
        self._stream = stream

    @classmethod
    def of_process(cls) -> Stderr:
        """The process's stderr (None when it was closed when the bridge started)."""
        text = sys.stderr
        return cls(text.buffer if text is not None and hasattr(text, "buffer") else None)

    @property
    def lost(self) -> bool:
        """Whether nothing is written any more."""
        return self._stream is None

    def write(self, data: bytes) -> None:
        stream = self._stream
        if stream is None:
            return
        try:
            stream.write(data)
            stream.flush()
        except (OSError, ValueError):  # ValueError: the file was closed
            self._stream = None
            _silence(stream)


def print_line(line: str) -> str | None:
    """Prints `line` and a newline on stdout; None when done, else why it could not be."""
    stdout = sys.stdout
    if stdout is None:
        return "stdout is closed"
    try:
        stdout.write(line + "\n")
        stdout.flush()
    except (OSError, ValueError) as error:
        _silence(stdout)
        return f"stdout: {error.strerror if isinstance(error, OSError) else error}"
    return None

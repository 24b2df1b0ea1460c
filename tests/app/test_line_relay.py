"""`line_relay`: a child's output reaches ours a whole line per write, whatever pieces the child
wrote it in, and a stderr that fails never blocks the child."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from shellexec.app import line_relay


@contextmanager
def pipe_written_by(write: Callable[[int], None]) -> Iterator[IO[bytes]]:
    """The read end of a pipe that a thread fills with `write(fd)` and then closes."""
    read_end, write_end = os.pipe()

    def fill() -> None:
        try:
            write(write_end)
        finally:
            os.close(write_end)

    writer = threading.Thread(target=fill)
    writer.start()
    try:
        yield os.fdopen(read_end, "rb")
    finally:
        writer.join(timeout=30)
        assert not writer.is_alive(), "the writer blocked: the relay stopped reading"


def relayed(pieces: list[bytes]) -> list[bytes]:
    written: list[bytes] = []

    def write(fd: int) -> None:
        for piece in pieces:
            os.write(fd, piece)

    with pipe_written_by(write) as source:
        line_relay.relay_lines(source, written.append)
    return written


def test_lines_written_in_pieces_are_passed_on_whole() -> None:
    # Envoy flushes its buffer a slice at a time, and a slice may end inside a line.
    pieces = [b'{"path": "/a', b'pi/v1"}\n{"pa', b'th": "/b"}\n{"path"', b': "/c"}\n']
    assert relayed(pieces) == [b'{"path": "/api/v1"}\n', b'{"path": "/b"}\n',
                               b'{"path": "/c"}\n']


def test_an_unfinished_last_line_is_ended() -> None:
    assert relayed([b"first\nlast words"]) == [b"first\n", b"last words\n"]


def test_a_line_without_end_is_passed_on_once_it_is_too_long() -> None:
    endless = b"x" * (line_relay.MAX_LINE_BYTES + line_relay.READ_BYTES)
    written = relayed([endless])
    assert len(written) == 2
    assert all(line.endswith(b"\n") for line in written)
    assert b"".join(line[:-1] for line in written) == endless
    assert len(written[0]) <= line_relay.MAX_LINE_BYTES + line_relay.READ_BYTES + 1


def test_a_failing_stderr_still_drains_the_child() -> None:
    # Far more than a pipe holds: a relay that stopped at the first failure would block the
    # writer (Envoy), and `pipe_written_by` would say so.
    def broken(line: bytes) -> None:
        raise BrokenPipeError

    def write(fd: int) -> None:
        for _ in range(2_000):
            os.write(fd, b"y" * 1_000 + b"\n")

    with pipe_written_by(write) as source:
        line_relay.relay_lines(source, broken)


def test_the_writer_writes_everything_to_its_fd_and_nothing_without_one(tmp_path: Path) -> None:
    target = tmp_path / "stderr"
    with open(target, "wb") as file:
        line_relay.write_all_to(file.fileno())(b"whole line\n")
        line_relay.write_all_to(None)(b"lost\n")
    assert target.read_bytes() == b"whole line\n"

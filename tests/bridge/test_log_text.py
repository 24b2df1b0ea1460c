"""The agent's text made fit for the bridge's log: one line, no control characters but the tab
(`bridge/log_text.py`), and every log line escaped as it is written."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from shellexec.bridge.cli import _configure_logging
from shellexec.bridge.log_text import escaped, escaped_line
from shellexec.bridge.stdio import Stderr


@pytest.mark.parametrize(("text", "shown"), [
    ("plain text, café", "plain text, café"),
    ("tab\tstays", "tab\tstays"),
    ("a\nb\rc", "a\\nb\\rc"),
    ("\x1b[2K\x00\x7f", "\\x1b[2K\\x00\\x7f"),
    ("C1 \x9b and \x85", "C1 \\x9b and \\x85"),  # CSI and NEL, control characters too
    ("line\u2028paragraph\u2029", "line\\u2028paragraph\\u2029"),
])
def test_control_characters_are_shown_escaped(text: str, shown: str) -> None:
    assert escaped(text) == shown


@pytest.mark.parametrize(("line", "shown"), [
    (b"windows line\r", b"windows line"),  # its \r\n end: a line end
    (b"50%\r100%", b"50%\\r100%"),
    (b"not utf-8 \xff\xfe", b"not utf-8 \\xff\\xfe"),
    (b"\xc2\x9b31m", b"\\x9b31m"),  # CSI, encoded in UTF-8
    (b"caf\xc3\xa9\tok", "café\tok".encode()),
])
def test_a_relayed_stderr_line_is_escaped(line: bytes, shown: bytes) -> None:
    assert escaped_line(line) == shown


@pytest.fixture
def logged() -> Iterator[io.BytesIO]:
    """The bridge's logging, into a buffer; the root logger is put back afterwards."""
    root, bridge = logging.getLogger(), logging.getLogger("shellexec.bridge")
    handlers, level, bridge_level = root.handlers[:], root.level, bridge.level
    buffer = io.BytesIO()
    _configure_logging(False, Stderr(buffer))
    try:
        yield buffer
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        bridge.setLevel(bridge_level)


def test_every_log_line_is_one_line_whatever_text_reached_it(logged: io.BytesIO) -> None:
    forged = "shellexec bridge: published 99 updates; 0 refused"
    logging.getLogger("shellexec.bridge").warning("said %s", f"x\n{forged}\r")
    logging.getLogger("acp").error("an SDK line\n%s", forged)

    assert logged.getvalue().decode().splitlines() == [
        f"shellexec bridge: said x\\n{forged}\\r",
        f"shellexec bridge: an SDK line\\n{forged}"]


def test_a_traceback_keeps_its_lines_none_of_which_reads_as_the_bridge_s(
        logged: io.BytesIO) -> None:
    forged = "shellexec bridge: published 99 updates; 0 refused"
    try:
        raise ValueError(f"bad\n{forged}")
    except ValueError:
        logging.getLogger("acp").exception("Unhandled error while handling request")

    lines = logged.getvalue().decode().splitlines()
    assert lines[0] == "shellexec bridge: Unhandled error while handling request"
    assert lines[1] == "  Traceback (most recent call last):"
    assert lines[-2:] == ["  ValueError: bad", f"  {forged}"]
    assert all(line.startswith("  ") for line in lines[1:])

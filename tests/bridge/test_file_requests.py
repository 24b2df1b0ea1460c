"""`fs/read_text_file` and `fs/write_text_file` from a hostile agent: a read costs the lines it
asks for, not the file; only regular files are read or written (a FIFO nobody writes must not
keep the bridge from exiting); an answer is capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bridge.hostile import (
    INVALID_PARAMS,
    MIB,
    Step,
    agent_text,
    error_of,
    request,
    run_raw,
    update,
)
from bridge.provider_scripts import say

from shellexec.bridge.line_window import MAX_READ_BYTES

from support.stack import Stack

pytestmark = pytest.mark.slow

BIG_FILE_BYTES = 64 * MIB
# Reading the whole file would grow the bridge by twice its size at least.
MEMORY_BOUND_KIB = 16 * 1024
LINE = "y" * 1023 + "\n"


def test_a_read_of_a_few_lines_does_not_load_a_huge_file(stack: Stack, tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("w") as out:
        out.write("first\nsecond\n")
        for _ in range(BIG_FILE_BYTES // (len(LINE) * 1024)):
            out.write(LINE * 1024)
    script: list[Step] = [
        {"parent_peak_rss": True},
        request("fs/read_text_file", path=str(big), line=1, limit=1),
        request("fs/read_text_file", path=str(big), line=2, limit=2),
        {"parent_peak_rss": True}]
    finished, record = run_raw(stack, tmp_path, script, "--allow-fs-read")

    assert finished.code == 0, finished.stderr[-3000:]
    assert [answer["result"] for answer in record["answers"]] == [
        {"content": "first\n"}, {"content": "second\n" + LINE}]
    before, after = record["parent_peak_rss"]
    assert after - before < MEMORY_BOUND_KIB, f"the bridge grew by {after - before} KiB"


def test_only_regular_files_are_read_or_written(stack: Stack, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "folder").mkdir()
    script: list[Step] = [
        # a FIFO nobody writes, or reads: opening it the usual way would wait for ever
        request("fs/read_text_file", path=str(tmp_path / "pipe")),
        request("fs/write_text_file", path=str(tmp_path / "pipe"), content="x"),
        request("fs/read_text_file", path=str(tmp_path / "folder")),
        request("fs/write_text_file", path=str(tmp_path / "folder"), content="x"),
        update(say("done"))]
    finished, record = run_raw(stack, tmp_path, script, "--allow-fs-read", "--allow-fs-write")

    assert finished.code == 0, finished.stderr[-3000:]
    assert [error_of(answer) for answer in record["answers"]] == [
        (INVALID_PARAMS, {"path": str(tmp_path / name), "reason": "not a regular file"})
        for name in ("pipe", "pipe", "folder", "folder")]
    assert agent_text(stack, finished) == ["done"]


def test_an_answer_over_the_cap_is_refused_and_a_line_past_it_is_read(
        stack: Stack, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("top\n" + "w" * MAX_READ_BYTES + "\nbottom\n")
    path = str(tmp_path / "wide.txt")
    script: list[Step] = [request("fs/read_text_file", path=path),
                          request("fs/read_text_file", path=path, line=2, limit=1),
                          request("fs/read_text_file", path=path, line=3),
                          request("fs/read_text_file", path=path, limit=1)]
    finished, record = run_raw(stack, tmp_path, script, "--allow-fs-read")

    assert finished.code == 0, finished.stderr[-3000:]
    whole, wide, *read = record["answers"]
    refusals = [error_of(whole), error_of(wide)]
    assert [code for code, _ in refusals] == [INVALID_PARAMS, INVALID_PARAMS]
    assert [sorted(data) for _, data in refusals] == [["limit", "reason"], ["limit", "reason"]]
    assert f"more than {MAX_READ_BYTES} bytes" in refusals[0][1]["reason"]
    assert [answer["result"] for answer in read] == [{"content": "bottom\n"},
                                                     {"content": "top\n"}]


def test_a_file_is_read_and_written_with_its_line_endings_as_they_are(
        stack: Stack, tmp_path: Path) -> None:
    """An agent edits by reading, changing a word and writing back: `\\r\\n` read as `\\n`
    turned a CRLF file into an LF one. Lines are counted as `sed` counts them (a form feed
    ended one)."""
    source = tmp_path / "notes.txt"
    source.write_bytes(b"line one old\r\nline two\r\n\fpage two\rsame line\n")
    path = str(source)
    script: list[Step] = [request("fs/read_text_file", path=path),
                          request("fs/read_text_file", path=path, line=3, limit=1),
                          request("fs/write_text_file", path=path,
                                  content="line one new\r\nline two\r\n")]
    finished, record = run_raw(stack, tmp_path, script, "--allow-fs-read", "--allow-fs-write")

    assert finished.code == 0, finished.stderr[-3000:]
    whole, third, written = record["answers"]
    assert whole["result"] == {"content": "line one old\r\nline two\r\n\fpage two\rsame line\n"}
    assert third["result"] == {"content": "\fpage two\rsame line\n"}
    assert "error" not in written
    assert source.read_bytes() == b"line one new\r\nline two\r\n"


def test_a_write_that_cannot_be_encoded_is_refused_and_leaves_the_file_as_it_was(
        stack: Stack, tmp_path: Path) -> None:
    """A lone surrogate (an emoji cut in half by a UTF-16 slice) is valid JSON but no UTF-8:
    the write truncated the file, then failed, and the file was left empty."""
    source = tmp_path / "keep.txt"
    source.write_text("what was there\n")
    script: list[Step] = [request("fs/write_text_file", path=str(source),
                                  content="cut \ud83d emoji")]
    finished, record = run_raw(stack, tmp_path, script, "--allow-fs-write")

    assert finished.code == 0, finished.stderr[-3000:]
    code, data = error_of(record["answers"][0])
    assert (code, sorted(data)) == (INVALID_PARAMS, ["content", "reason"])
    assert "lone surrogate" in data["reason"]
    assert source.read_text() == "what was there\n"
    assert "Traceback" not in finished.stderr

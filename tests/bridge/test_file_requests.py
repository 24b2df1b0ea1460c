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

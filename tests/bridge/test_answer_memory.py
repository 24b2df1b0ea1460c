"""Answers the agent asks for and does not read: the ACP SDK answers each request in a task of
its own, so an agent that sends many `terminal/output` or `fs/read_text_file` requests and
stops reading its stdin had the bridge build and hold every answer at once. 8 MiB of `\\x01`
is 48 MB of JSON (`\\u0001`), and twelve requests of 100 bytes grew the bridge from 91 MB to
788 MB. Now one large answer is built and held at a time, whatever their number, and all of
them still arrive, in order, once the agent reads."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from bridge.hostile import HANG_SECONDS, MIB, Step, launch_raw, request, run_raw

from support.stack import Stack

pytestmark = pytest.mark.slow

PRINTED = 8 * MIB
# Six bytes of JSON (`\u0001`) a byte printed: one answer's frame.
FRAME_MIB = 6 * PRINTED // MIB
REQUESTS = 10
# What the bridge may grow by while the answers wait unread: one answer being sent (its frame
# and its text), with room to spare, but far less than the ten answers it used to hold.
UNREAD_BOUND_KIB = 3 * FRAME_MIB * 1024
# Its peak over the whole run, while every answer is built and sent in turn: a frame is held
# about twice while it is encoded.
PEAK_BOUND_KIB = 5 * FRAME_MIB * 1024


def _unread(method: str, count: int, **params: Any) -> Step:
    return {"unread": {"method": method, "params": {"sessionId": "raw-session", **params}},
            "count": count}


def _bounded_while_unread(workdir: Path, ask: Step) -> list[Step]:
    """`ask` (REQUESTS requests) left unread; then, once the bridge has taken a later write
    request (and so has begun, one by one in arrival order, every request before it), its
    memory; then every answer read."""
    marker = workdir / "after-the-requests.txt"
    return [{"parent_rss": True}, {"parent_peak_rss": True}, ask,
            _unread("fs/write_text_file", 1, path=str(marker), content="x"),
            {"await_file": str(marker)}, {"parent_rss": True}, {"read_unread": True},
            {"parent_peak_rss": True}]


def _check(finished_code: int, stderr: str, record: dict[str, Any], first_id: int,
           expected: dict[str, Any]) -> None:
    assert finished_code == 0, stderr[-3000:]
    before, unread = record["parent_rss"]
    assert unread - before < UNREAD_BOUND_KIB, (
        f"the bridge grew by {unread - before} KiB holding unread answers")
    peak_before, peak_after = record["parent_peak_rss"]
    assert peak_after - peak_before < PEAK_BOUND_KIB, (
        f"the bridge's peak grew by {peak_after - peak_before} KiB")
    # All of them, the large ones in the order asked (the write's small answer may overtake
    # those that wait for their turn).
    write_id = f"raw-{first_id + REQUESTS}"
    answers = {answer["id"]: answer for answer in record["unread_answers"]}
    assert answers.pop(write_id) == {"id": write_id, "error": None, "result": {}}
    assert [answer["id"] for answer in record["unread_answers"] if answer["id"] != write_id] == [
        f"raw-{first_id + index}" for index in range(REQUESTS)]
    assert [answer["result"] for answer in answers.values()] == [expected] * REQUESTS
    assert [answer["error"] for answer in answers.values()] == [None] * REQUESTS


def test_terminal_output_answers_left_unread_are_held_one_at_a_time(
        stack: Stack, tmp_path: Path) -> None:
    script: list[Step] = [
        {"named_request": request("terminal/create",
                                  command=f"head -c {PRINTED} /dev/zero | tr '\\0' '\\1'")[
                                      "request"], "as": "t1"},
        {"named_request": request("terminal/wait_for_exit", terminalId="@t1")["request"]},
        *_bounded_while_unread(tmp_path, _unread("terminal/output", REQUESTS,
                                                 terminalId="@t1")),
        # The agent reads again: requests are answered as before.
        {"named_request": request("terminal/release", terminalId="@t1")["request"]},
        {"named_request": request("terminal/create", command="printf hi")["request"],
         "as": "t2"},
        {"named_request": request("terminal/wait_for_exit", terminalId="@t2")["request"]},
        {"named_request": request("terminal/output", terminalId="@t2")["request"]}]
    finished, record = run_raw(stack, tmp_path, script, "--host-terminals", "--allow-fs-write")

    expected = {"output": PRINTED, "truncated": False, "exitStatus": {"exitCode": 0}}
    _check(finished.code, finished.stderr, record, 2, expected)
    assert [answer.get("result") for answer in record["answers"][2:]] == [
        {}, {"terminalId": record["answers"][3]["result"]["terminalId"]}, {"exitCode": 0},
        {"output": "hi", "truncated": False, "exitStatus": {"exitCode": 0}}]


def test_file_read_answers_left_unread_are_held_one_at_a_time(
        stack: Stack, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"\x01" * PRINTED)
    small = tmp_path / "small.txt"
    small.write_text("small\n")
    script: list[Step] = [
        *_bounded_while_unread(tmp_path, _unread("fs/read_text_file", REQUESTS,
                                                 path=str(big))),
        # The agent reads again: a request is answered as before.
        request("fs/read_text_file", path=str(small))]
    finished, record = run_raw(stack, tmp_path, script, "--allow-fs-read", "--allow-fs-write")

    _check(finished.code, finished.stderr, record, 0, {"content": PRINTED})
    assert record["answers"][0]["result"] == {"content": "small\n"}


def test_a_signal_stops_a_bridge_whose_agent_stopped_reading(stack: Stack,
                                                             tmp_path: Path) -> None:
    """The bridge sent `session/cancel` behind answers the agent never read, and waited for
    that send without end: neither a second SIGINT nor SIGTERM stopped it, and no turn was
    recorded. Sending the cancel now counts in --cancel-grace."""
    launched, _ = launch_raw(stack, tmp_path, [
        _unread("nobody/serves-this", 3000), {"stderr": "all sent\n"}, {"hang": 120}],
        "--cancel-grace", "1")
    launched.wait_for_stderr("all sent")
    launched.process.send_signal(signal.SIGINT)
    finished = launched.finish_unhung(HANG_SECONDS)

    assert finished.code == 130, finished.stderr[-3000:]
    assert finished.result()["stop_reason"] == "cancelled"

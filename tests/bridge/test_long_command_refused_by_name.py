"""A hosted command the OS cannot start for its size: a command line longer than one argument
of `bash -c` may be (Linux's MAX_ARG_STRLEN, 128 KiB with its NUL), or a line and environment
together more than a new program may get. Either was answered "internal error" with the
reason `Argument list too long` and the whole command echoed back (8 MiB for an 8 MiB
heredoc), and the bridge logged nothing. Now: "invalid params" naming the field and the
limit, the command not repeated (the log quotes at most its start), and a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bridge.hostile import INVALID_PARAMS, error_of, request, run_raw

from shellexec.bridge.terminals import MAX_ARGUMENT_BYTES

from support.stack import Stack

pytestmark = pytest.mark.slow

# Far less than the command lines here: an answer this short repeats none of them.
SHORT_ANSWER = 2000
# More than Linux gives a new program for its arguments and environment whatever the stack
# limit (at most 6 MiB), each variable far under one argument's limit.
BIG_ENV = [{"name": f"V{n}", "value": "v" * 100_000} for n in range(70)]


def _line(prefix: str, size: int, filler: str = "x") -> str:
    """`prefix` and a shell comment of `filler` making `size` bytes of UTF-8 in all."""
    rest = size - len(prefix.encode()) - 1
    width = len(filler.encode())
    return f"{prefix}#{filler * (rest // width)}{'x' * (rest % width)}"


def _terminal_steps(command: str, name: str) -> list[dict[str, Any]]:
    return [{"named_request": {"method": "terminal/create",
                               "params": {"sessionId": "raw-session", "command": command}},
             "as": name},
            {"named_request": {"method": "terminal/wait_for_exit",
                               "params": {"sessionId": "raw-session", "terminalId": f"@{name}"}}},
            {"named_request": {"method": "terminal/output",
                               "params": {"sessionId": "raw-session", "terminalId": f"@{name}"}}},
            {"named_request": {"method": "terminal/release",
                               "params": {"sessionId": "raw-session", "terminalId": f"@{name}"}}}]


def test_a_command_line_too_long_for_one_argument_is_refused_by_name_and_not_echoed(
        stack: Stack, tmp_path: Path) -> None:
    over = _line("echo over ", MAX_ARGUMENT_BYTES)  # its NUL makes it one byte too long
    # Under the limit in characters, twice over it in bytes: the OS counts bytes.
    wide = _line("echo wide ", 2 * MAX_ARGUMENT_BYTES, filler="€")
    with_args = "x" * (MAX_ARGUMENT_BYTES // 2)  # shell-quoted args count in the line
    under = _line("printf 'ran under the limit'; : é ", MAX_ARGUMENT_BYTES - 1, filler="é")
    assert len(wide) < MAX_ARGUMENT_BYTES
    finished, record = run_raw(stack, tmp_path, [
        request("terminal/create", command=over),
        request("terminal/create", command=wide),
        request("terminal/create", command="echo", args=[with_args, with_args]),
        *_terminal_steps(under, "t1")], "--host-terminals")

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    refused, refused_wide, refused_args, created, waited, output, _ = record["answers"]
    longest = MAX_ARGUMENT_BYTES - 1
    for answer, size in ((refused, MAX_ARGUMENT_BYTES), (refused_wide, 2 * MAX_ARGUMENT_BYTES),
                         (refused_args, 2 * len(with_args) + len("echo  "))):
        assert len(json.dumps(answer)) < SHORT_ANSWER, str(answer)[:SHORT_ANSWER]
        code, data = error_of(answer)
        assert code == INVALID_PARAMS
        assert data["command"] == f"{size} bytes, not repeated here"
        assert data["maxBytes"] == longest
        assert data["reason"] == (
            f"the command line is {size} bytes (UTF-8, args included), over the {longest} one "
            f"argument of `bash -c` can hold (Linux's MAX_ARG_STRLEN, {MAX_ARGUMENT_BYTES} "
            "with its NUL): write a long script to a file first and run that file")
    lines = finished.stderr.splitlines()
    for command in (over, wide):  # the log quotes the first 80 characters
        size = len(command.encode())
        assert (f"shellexec bridge: terminal/create of {command[:80]!r} refused: the command "
                f"line is {size} bytes (UTF-8, args included), over the {longest} one "
                "argument") in "\n".join(lines)
    assert "x" * 100 not in finished.stderr
    assert "€" * 100 not in finished.stderr

    assert created["result"]["terminalId"].startswith("term_"), created
    assert waited["result"]["exitCode"] == 0, waited
    assert output["result"]["output"] == "ran under the limit", output


def test_a_command_the_os_will_not_start_for_its_environment_names_the_cause(
        stack: Stack, tmp_path: Path) -> None:
    big_value = [{"name": "HUGE", "value": "h" * MAX_ARGUMENT_BYTES}]
    finished, record = run_raw(stack, tmp_path, [
        request("terminal/create", command="echo too much " + "c" * 100, env=BIG_ENV),
        request("terminal/create", command="echo one too long", env=big_value),
        request("terminal/create", command="echo still fine")], "--host-terminals")

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    total, single, fine = record["answers"]
    for answer in (total, single):
        assert len(json.dumps(answer)) < SHORT_ANSWER, str(answer)[:SHORT_ANSWER]
    code, data = error_of(total)
    assert code == INVALID_PARAMS
    assert data["command"] == f"{len('echo too much ') + 100} bytes, not repeated here"
    assert data["reason"].startswith("the system would not start it (E2BIG, argument list too "
                                     "long): the command line (114 bytes) and its environment")
    assert "pass less in env, or write a long script to a file first" in data["reason"]
    code, data = error_of(single)
    assert code == INVALID_PARAMS
    assert data["env"] == "HUGE"
    assert data["reason"].startswith(
        f"the environment variable HUGE is {MAX_ARGUMENT_BYTES + 5} bytes as NAME=value")
    lines = finished.stderr.splitlines()
    # The log quotes the start of the line, cut to 80 characters.
    assert any(line.startswith("shellexec bridge: terminal/create of 'echo too much "
                               + "c" * 66 + "' refused: the system would not start it")
               for line in lines), finished.stderr[-3000:]
    assert any(line.startswith("shellexec bridge: terminal/create of 'echo one too long' "
                               "refused: the environment variable HUGE is") for line in lines)
    assert "h" * 100 not in finished.stderr
    assert "v" * 100 not in finished.stderr
    assert fine["result"]["terminalId"].startswith("term_"), fine

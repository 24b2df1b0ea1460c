"""The bridge's own stdin, stdout and stderr: closed when it starts, or their reader gone while
it runs (`2> >(head -c 200)`, `| head -0`). The run is recorded all the same, with the exit
status of the run and no traceback; a prompt to read from a closed stdin is a usage error."""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
from pathlib import Path

import pytest
from bridge.harness import BridgeCommand, Step, bridge_command
from bridge.provider_scripts import say

from shellexec.bridge.agent import relay_stderr
from shellexec.bridge.stdio import Stderr
from shellexec.client import ShellExecClient

from support.stack import Stack

# Far longer than any run here takes; only a bridge that hangs waits so long.
HANG_SECONDS = 60.0
SCRIPT: list[Step] = [{"update": say("before ")}, {"update": say("after")}]
# Past the 64 KiB a pipe holds: an agent whose stderr nobody reads blocks on it.
CHATTY: list[Step] = [{"update": say("before ")}, {"stderr": "x" * 999, "repeat": 200},
          {"update": say("after")}]
# `$0` is the wrapper's name; `"$@"` the bridge's command line.
WITHOUT_STDIN = ["sh", "-c", 'exec "$@" <&-', "sh"]
WITHOUT_STDOUT = ["sh", "-c", 'exec "$@" >&-', "sh"]
WITHOUT_STDERR = ["sh", "-c", 'exec "$@" 2>&-', "sh"]


class _ReaderGone(io.BytesIO):
    """A stream whose reader went away after its first write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: object) -> int:
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(data)  # type: ignore[arg-type]


def test_the_relay_reads_the_agent_s_stderr_to_its_end_once_the_bridge_s_is_gone() -> None:
    async def relay() -> tuple[bool, bool]:
        agent_stderr = asyncio.StreamReader()
        agent_stderr.feed_data(b"a line\n" * 100_000)  # 700 KB, many reads
        agent_stderr.feed_eof()
        await relay_stderr(agent_stderr, sink)
        return agent_stderr.at_eof(), sink.lost

    stream = _ReaderGone()
    sink = Stderr(stream)
    assert asyncio.run(relay()) == (True, True)
    assert stream.writes == 2  # none after the one that failed
    assert stream.getvalue().startswith(b"[agent] a line\n")


def _finished(process: subprocess.Popen[bytes]) -> int:
    try:
        return process.wait(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("the bridge hung") from None


def _recorded(client: ShellExecClient, session_id: str) -> list[str]:
    """The session's agent text, once its turn is completed."""
    session = client.get_session(session_id)
    assert (session.state, session.current_turn_id) == ("idle", "")
    return [m.content for m in client.messages(session_id) if m.author_type == "agent"]


def _command(stack: Stack, workdir: Path, script: list[Step],
             *options: str, wrapper: list[str] | None = None) -> BridgeCommand:
    return bridge_command(stack, workdir, script, "--prompt", "hi", *options,
                          wrapper=wrapper or [])


@pytest.mark.slow
def test_a_stderr_whose_reader_went_away_neither_fails_nor_blocks_the_run(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    """The relay died on BrokenPipeError: the run ended in a traceback with exit 1 and no
    JSON line, its turn left running, or the agent blocked on its stderr and the run hung."""
    command = _command(stack, tmp_path, CHATTY)
    with (tmp_path / "stdout.txt").open("wb") as stdout:
        process = subprocess.Popen(command.argv, stdout=stdout, stderr=subprocess.PIPE)
    assert process.stderr is not None
    process.stderr.close()  # no reader is left: every write to it fails (EPIPE)

    assert _finished(process) == 0
    [line] = (tmp_path / "stdout.txt").read_text().splitlines()
    assert '"stop_reason": "end_turn"' in line
    session_id = re.search(r'"session_id": "([^"]+)"', line)
    assert session_id is not None
    assert _recorded(client, session_id.group(1)) == ["before after"]


@pytest.mark.slow
def test_a_closed_stderr_is_no_failure(stack: Stack, client: ShellExecClient,
                                       tmp_path: Path) -> None:
    command = _command(stack, tmp_path, CHATTY, wrapper=WITHOUT_STDERR)
    finished = subprocess.run(command.argv, capture_output=True, text=True,
                              timeout=HANG_SECONDS, check=False)

    assert finished.returncode == 0, finished.stderr
    session_id = re.search(r'"session_id": "([^"]+)"', finished.stdout)
    assert session_id is not None
    assert _recorded(client, session_id.group(1)) == ["before after"]


@pytest.mark.slow
@pytest.mark.parametrize("stdout", ["reader gone", "closed"])
def test_a_result_line_that_cannot_be_printed_is_said_and_the_status_is_the_run_s(
        stack: Stack, client: ShellExecClient, tmp_path: Path, stdout: str) -> None:
    """The turn was recorded, then printing the line raised (BrokenPipeError, or
    AttributeError on a closed stdout): a traceback, and exit 1, which means "the agent
    failed"."""
    closed = stdout == "closed"
    command = _command(stack, tmp_path, SCRIPT, wrapper=WITHOUT_STDOUT if closed else None)
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        process = subprocess.Popen(command.argv, stdout=None if closed else subprocess.PIPE,
                                   stderr=stderr)
    if process.stdout is not None:
        process.stdout.close()

    assert _finished(process) == 0
    log = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in log
    said = re.search(r"shellexec bridge: cannot print the result line \((.+)\); the turn is "
                     r"recorded: session (\S+) \(http://\S+\)", log)
    assert said is not None, log
    assert said.group(1) == ("stdout is closed" if closed else "stdout: Broken pipe")
    assert _recorded(client, said.group(2)) == ["before after"]


@pytest.mark.slow
def test_a_prompt_from_a_closed_stdin_is_a_usage_error(stack: Stack, tmp_path: Path) -> None:
    command = bridge_command(stack, tmp_path, SCRIPT, "--prompt-file", "-",
                             wrapper=WITHOUT_STDIN)
    finished = subprocess.run(command.argv, capture_output=True, text=True,
                              timeout=HANG_SECONDS, check=False)

    assert finished.returncode == 2, finished.stderr
    assert finished.stderr.endswith(
        "shellexec bridge: error: --prompt-file -: stdin is closed; there is no prompt to "
        "read\n")
    assert finished.stdout == ""
    assert not command.record_path.exists()  # the agent never started

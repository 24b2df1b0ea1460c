"""Running the real `shellexec bridge` command against the fake agent and a real service, and
what the service should then hold according to the normalization engine."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shellexec import normalize
from shellexec.api.convert import output_from_proto
from shellexec.client import ShellExecClient
from shellexec.normalize import OutputSummary, ShellRecord
from shellexec.v1 import message_pb2, shell_output_pb2
from shellexec.vocabulary import ACP_TERMINAL_UPDATES, ACP_TOOL_UPDATES, META_TERMINAL_TOOL_CALL

from support.stack import Stack

SHELLEXEC = Path(sys.executable).parent / "shellexec"
FAKE_AGENT = Path(__file__).resolve().with_name("fake_agent.py")

Update = dict[str, Any]
Step = dict[str, Any]
_runs = itertools.count(1)


def updates_of(steps: Iterable[Step]) -> list[Update]:
    """The updates a script sends, in order."""
    return [step["update"] for step in steps if "update" in step]


@dataclass(frozen=True)
class Finished:
    """A bridge process that exited."""

    code: int
    stdout: str
    stderr: str
    record: dict[str, Any]

    def result(self) -> dict[str, Any]:
        """The JSON line: stdout must be exactly one line."""
        lines = self.stdout.splitlines()
        assert len(lines) == 1, f"stdout: {self.stdout!r}\nstderr: {self.stderr}"
        parsed: dict[str, Any] = json.loads(lines[0])
        return parsed


@dataclass(frozen=True)
class Launched:
    """A running bridge; its stdout and stderr go to files so a chatty run never blocks."""

    process: subprocess.Popen[bytes]
    record_path: Path
    stdout_path: Path
    stderr_path: Path

    def record(self) -> dict[str, Any]:
        """What the fake agent received so far."""
        if not self.record_path.exists():
            return {}
        loaded: dict[str, Any] = json.loads(self.record_path.read_text())
        return loaded

    def wait_for_mark(self, mark: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while mark not in self.record().get("marks", []):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no mark {mark!r}; stderr: {self.stderr_path.read_text()}")
            time.sleep(0.02)

    def wait_for_stderr(self, text: str, timeout: float = 30.0) -> None:
        """Waits until the bridge has written `text` to stderr (a line of its log)."""
        deadline = time.monotonic() + timeout
        while text not in self.stderr_path.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no {text!r} on stderr: {self.stderr_path.read_text()}")
            time.sleep(0.02)

    def finish(self, timeout: float = 60.0) -> Finished:
        code = self.process.wait(timeout=timeout)
        return Finished(code, self.stdout_path.read_text(), self.stderr_path.read_text(),
                        self.record())

    def finish_unhung(self, timeout: float) -> Finished:
        """`finish`, but a bridge still running after `timeout` is killed and the test fails
        with its stderr: a hang is what the test is there to catch."""
        try:
            return self.finish(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("the bridge hung; stderr: "
                                 + self.stderr_path.read_text()[-3000:]) from None


@dataclass(frozen=True)
class BridgeCommand:
    """The command line of one bridge run on the fake agent, and where the agent's record
    goes; `run` numbers it among the test's runs."""

    argv: list[str]
    record_path: Path
    run: int


def bridge_command(stack: Stack, workdir: Path, steps: Sequence[Step], *options: str,
                   report_env: Sequence[str] = (), command: Sequence[str] | None = None,
                   addresses: bool = True, wrapper: Sequence[str] = ()) -> BridgeCommand:
    """`shellexec bridge OPTIONS -- python fake_agent.py SCRIPT RECORD`, pointed at `stack`
    by --server and --web-url unless `addresses` is false, under the `wrapper` command if one
    is given; the script is written."""
    run = next(_runs)
    script = workdir / f"script-{run}.jsonl"
    script.write_text("".join(json.dumps(step) + "\n" for step in steps))
    record = workdir / f"record-{run}.json"
    agent = command if command is not None else (
        sys.executable, str(FAKE_AGENT), str(script), str(record),
        "--report-env", ",".join(report_env))
    where = ["--server", stack.grpc_target, "--web-url", stack.rest_url] if addresses else []
    argv = [*wrapper, str(SHELLEXEC), "bridge", *where, "--cwd", str(workdir), *options, "--",
            *agent]
    return BridgeCommand(argv, record, run)


def launch(stack: Stack, workdir: Path, steps: Sequence[Step], *options: str,
           env: Mapping[str, str] | None = None, report_env: Sequence[str] = (),
           command: Sequence[str] | None = None, addresses: bool = True,
           wrapper: Sequence[str] = ()) -> Launched:
    """Starts the bridge of `bridge_command`, its stdout and stderr going to files."""
    started = bridge_command(stack, workdir, steps, *options, report_env=report_env,
                             command=command, addresses=addresses, wrapper=wrapper)
    argv, record, run = started.argv, started.record_path, started.run
    stdout, stderr = workdir / f"stdout-{run}.txt", workdir / f"stderr-{run}.txt"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err,
                                   env={**os.environ, **(env or {})})
    return Launched(process, record, stdout, stderr)


def run_bridge(stack: Stack, workdir: Path, steps: Sequence[Step], *options: str,
               env: Mapping[str, str] | None = None, report_env: Sequence[str] = (),
               command: Sequence[str] | None = None, addresses: bool = True) -> Finished:
    """Runs the bridge to its end."""
    return launch(stack, workdir, steps, *options, env=env, report_env=report_env,
                  command=command, addresses=addresses).finish()


def agent_command(workdir: Path, steps: Sequence[Step], name: str) -> list[str]:
    """An executable called `name` that runs the fake agent on `steps` (its record is
    `workdir/NAME.record.json`), for tests of how the bridge treats the command itself."""
    script = workdir / f"{name}.script.jsonl"
    script.write_text("".join(json.dumps(step) + "\n" for step in steps))
    program = workdir / name
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_AGENT} {script} "
                       f"{workdir / (name + '.record.json')} \"$@\"\n")
    program.chmod(0o755)
    return [str(program)]


# -- what the service should hold ------------------------------------------------------------

def tool_groups(updates: Iterable[Update]) -> dict[str, list[Update]]:
    """The updates of each tool call, by id, in the order the calls first appeared; a terminal
    update goes with the call its `_meta.shellexec_tool_call_id` names."""
    groups: dict[str, list[Update]] = {}
    for update in updates:
        if update.get("sessionUpdate") in ACP_TOOL_UPDATES:
            groups.setdefault(str(update["toolCallId"]), []).append(update)
        elif update.get("sessionUpdate") in ACP_TERMINAL_UPDATES:
            named = (update.get("_meta") or {}).get(META_TERMINAL_TOOL_CALL)
            if str(named) in groups:
                groups[str(named)].append(update)
    return groups


def expected_record(updates: Sequence[Update], agent: str) -> ShellRecord:
    """The record of one tool call after its turn completed (running calls are cancelled)."""
    return normalize.shell_record(normalize.cancel(normalize.fold_all(updates, agent=agent)))


def expected_chat(prompt: str, updates: Iterable[Update]) -> list[tuple[str, str]]:
    """(author or `tool`, text or tool call id) per message, as the service groups them: a
    chat chunk extends the latest message when that is the same author's text."""
    chat: list[tuple[str, str]] = [("user", prompt)]
    seen: set[str] = set()
    authors = {"agent_message_chunk": "agent", "user_message_chunk": "user"}
    for update in updates:
        kind = update.get("sessionUpdate")
        if kind in ACP_TOOL_UPDATES and update["toolCallId"] not in seen:
            seen.add(update["toolCallId"])
            chat.append(("tool", update["toolCallId"]))
        elif kind in authors and (text := update["content"].get("text")):
            author = authors[str(kind)]
            if chat[-1][0] == author:
                chat[-1] = (author, chat[-1][1] + text)
            else:
                chat.append((author, text))
    return chat


def _summary(summary: shell_output_pb2.ShellOutputSummary) -> OutputSummary:
    return OutputSummary(
        exit_code=summary.exit_code if summary.HasField("exit_code") else None,
        truncated=summary.truncated, has_output=summary.has_output,
        stdout_bytes=summary.stdout_bytes, stderr_bytes=summary.stderr_bytes)


def assert_tool_message(client: ShellExecClient, message: message_pb2.Message,
                        expected: ShellRecord) -> None:
    """The persisted message and its shell output are exactly the normalized record."""
    assert message.metadata.status == expected.status
    assert message.type == ("tool_execute" if expected.is_shell else "tool_call")
    if not expected.is_shell:
        return
    shell = message.metadata.normalized.shell_exec
    assert (shell.command, shell.work_dir) == (expected.command or "", expected.work_dir or "")
    assert message.content == (expected.command or expected.title or "")
    assert _summary(shell.output) == normalize.summarize(expected.output)
    shell_output = client.shell_output(message.session_id, message.id)
    assert shell_output.status == expected.status
    assert output_from_proto(shell_output.output) == expected.output


def assert_recorded(client: ShellExecClient, session_id: str, prompt: str,
                    updates: Sequence[Update], agent: str) -> None:
    """The session holds the prompt, the chat text and one normalized record per tool call,
    in arrival order."""
    messages = client.messages(session_id)
    chat = expected_chat(prompt, updates)
    kinds = [("tool", "") if m.type in ("tool_execute", "tool_call") else (m.author_type,
                                                                            m.content)
             for m in messages]
    assert kinds == [("tool", "") if who == "tool" else (who, text) for who, text in chat]
    groups = tool_groups(updates)
    tools = [m for m in messages if m.type in ("tool_execute", "tool_call")]
    for message, group in zip(tools, groups.values(), strict=True):
        assert_tool_message(client, message, expected_record(group, agent))

"""What the agent chose (a hosted command, a directory, a path, a terminal id, a session id, an
environment variable, a permission's title and option id, its own name and version, the message
and data of an error it answered) is repeated in the bridge's log and in its answers by its
first QUOTED_CHARS characters and its length only (`os_text.quoted_start`), as a refused value
already was. A successful `terminal/create` logged its whole command line, up to 128 KiB in one
line, and an answer repeated a path or a command of up to a frame's 16 MiB, twice in an
internal error (the path, and the system's message naming it again)."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
from pathlib import Path
from typing import Any, cast

import pytest
from acp.exceptions import RequestError
from acp.schema import (
    EnvVariable,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    ToolCallUpdate,
)

from shellexec.bridge import terminals
from shellexec.bridge.agent import AgentHandle, failure_reason, open_acp_session
from shellexec.bridge.files import FileAccess
from shellexec.bridge.guarded_command import GuardedCommand
from shellexec.bridge.handlers import BridgeClient
from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.os_text import QUOTED_CHARS
from shellexec.bridge.own_session import OwnSession
from shellexec.bridge.terminals import TerminalHost

# Far longer than a log line or an answer should repeat; short of what a command line may be.
LONG = 100_000
OURS = "ses-ours"


def shown(text: str) -> str:
    """How an answer repeats a long `text`."""
    return f"{text[:QUOTED_CHARS]}… ({len(text)} characters)"


def logged(text: str) -> str:
    """How a log line quotes a long `text`."""
    return f"{text[:QUOTED_CHARS]!r}… ({len(text)} characters)"


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def refusal(call: Any) -> dict[str, Any]:
    """The data of the RequestError that awaiting `call` raises."""
    async def refused() -> dict[str, Any]:
        with pytest.raises(RequestError) as raised:
            await call
        return dict(raised.value.data or {})

    return asyncio.run(refused())


# -- hosted terminals ----------------------------------------------------------------------


def _host(root: Path) -> TerminalHost:
    return TerminalHost(root, dict(os.environ), 60, lambda update: None, OpenCalls())


def _run(host: TerminalHost, line: str, cwd: str | None = None) -> str:
    """Runs `line` in a terminal of `host` to its end; the terminal's id."""
    async def scenario() -> str:
        terminal_id = await host.create(line, None, None, cwd, None)
        await host.wait_for_exit(terminal_id)
        await host.release(terminal_id)
        return terminal_id

    return asyncio.run(scenario())


@pytest.mark.slow
@pytest.mark.parametrize(("directory", "made"), [(None, False), ("d/" * 1000, False),
                                                 ("e/" * 150, True)],
                         ids=["root", "missing", "deep"])
def test_a_hosted_command_and_its_directory_are_logged_by_their_start(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, directory: str | None,
        made: bool) -> None:
    line = ": " + "y" * LONG
    root = str(tmp_path.resolve())
    if made:
        assert directory is not None
        (tmp_path / directory).mkdir(parents=True)
    with caplog.at_level(logging.INFO, logger="shellexec.bridge"):
        terminal_id = _run(_host(tmp_path), line, directory)
    said = messages(caplog)
    where = logged(str((tmp_path / str(directory)).resolve())) if made else repr(root)
    assert f"terminal {terminal_id}: running {logged(line)} in {where}" in said
    if directory is not None and not made:
        assert (f"terminal: directory {logged(directory)} is outside --cwd or missing; "
                f"running in {root}") in said
    assert max(len(message) for message in said) < 1000


@pytest.mark.slow
def test_a_directory_name_too_long_for_the_system_runs_the_command_in_the_root(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Asked whether it is a directory, the system refused the name (ENAMETOOLONG): the
    create failed with the SDK's traceback, and its internal error repeated the path whole."""
    directory = "d" * LONG
    with caplog.at_level(logging.INFO, logger="shellexec.bridge"):
        _run(_host(tmp_path), "true", directory)
    assert (f"terminal: directory {logged(directory)} is outside --cwd or missing; running "
            f"in {tmp_path.resolve()}") in messages(caplog)


def test_terminal_refusals_repeat_the_agent_s_text_by_its_start(tmp_path: Path) -> None:
    host = _host(tmp_path)
    blank = " " * LONG
    assert refusal(host.create(blank, None, None, None, None)) == {
        "command": shown(blank), "reason": "is empty"}
    not_a_name = "not a name " * (LONG // 10)
    assert refusal(host.create("true", None, [EnvVariable(name=not_a_name, value="")], None,
                               None)) == {"env": shown(not_a_name),
                                          "reason": "not a variable name"}
    unknown = "t" * LONG
    with pytest.raises(RequestError) as raised:
        host.output(unknown)
    assert raised.value.data == {"terminalId": shown(unknown), "reason": "no such terminal"}


@pytest.mark.slow
def test_a_variable_too_long_to_start_is_named_by_its_start(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    name = "X" * (terminals.MAX_ARGUMENT_BYTES + 10)  # too long as NAME=value by its name
    with caplog.at_level(logging.WARNING, logger="shellexec.bridge"):
        data = refusal(_host(tmp_path).create("true", None, [EnvVariable(name=name, value="")],
                                              None, None))
    assert data["env"] == shown(name)
    assert shown(name) in data["reason"]
    assert len(data["reason"]) < 1000
    [warning] = messages(caplog)
    assert warning.startswith("terminal/create of 'true' refused: the environment variable ")
    assert len(warning) < 1000


def test_a_command_that_cannot_start_is_repeated_by_its_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def cannot_start(*args: object) -> None:
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(GuardedCommand, "start", cannot_start)
    line = ": " + "y" * LONG
    assert refusal(_host(tmp_path).create(line, None, None, None, None)) == {
        "command": shown(line), "reason": os.strerror(errno.EACCES)}


# -- files ---------------------------------------------------------------------------------


def test_file_refusals_repeat_the_path_by_its_start(tmp_path: Path) -> None:
    files = FileAccess(tmp_path, read=True, write=True)
    relative = "r" * LONG
    assert refusal(files.read(relative, None, None)) == {
        "path": shown(relative), "reason": "must be absolute"}
    outside = "/" + "o" * LONG
    assert refusal(files.read(outside, None, None)) == {
        "path": shown(outside), "reason": "outside the bridge's working directory"}
    missing = str(tmp_path / ("a/" * (LONG // 2)) / "f")
    assert refusal(files.read(missing, None, None)) == {"uri": shown(missing)}
    root = str(tmp_path) + "/." * (LONG // 2)  # a directory, not a regular file
    for call in (files.read(root, None, None), files.write(root, "x")):
        assert refusal(call) == {"path": shown(root), "reason": "not a regular file"}


@pytest.mark.parametrize("method", ["read", "write"])
def test_a_name_too_long_for_the_system_is_not_repeated_by_its_reason(
        tmp_path: Path, method: str) -> None:
    """The system's message named the file again, whole (`[Errno 36] File name too long:
    'nnn…'`): the reason is the system's, and the path is quoted once, by its start."""
    files = FileAccess(tmp_path, read=True, write=True)
    path = str(tmp_path / ("n" * LONG))
    call = files.read(path, None, None) if method == "read" else files.write(path, "x")
    assert refusal(call) == {"path": shown(path), "reason": os.strerror(errno.ENAMETOOLONG)}


# -- requests ------------------------------------------------------------------------------


def _client(root: Path) -> BridgeClient:
    own = OwnSession()
    own.id = OURS
    return BridgeClient("allow_once", FileAccess(root, read=True, write=False), lambda: False,
                        own=own)


def test_a_requested_path_is_logged_by_its_start(tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / ("p" * LONG))
    with caplog.at_level(logging.INFO, logger="shellexec.bridge"):
        refusal(_client(tmp_path).read_text_file(OURS, path))
    assert messages(caplog) == [
        f"agent asked to read {logged(path)}: refused (Internal error)"]


def test_another_session_is_repeated_by_its_start(tmp_path: Path) -> None:
    other = "s" * LONG
    assert refusal(_client(tmp_path).read_text_file(other, str(tmp_path / "x"))) == {
        "sessionId": shown(other), "reason": "not the session this bridge opened"}


def test_a_permission_s_title_and_option_are_logged_by_their_start(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    title, option = "t" * LONG, "o" * LONG
    asked = _client(tmp_path).request_permission(
        OURS, ToolCallUpdate(tool_call_id="c1", title=title),
        [PermissionOption(option_id=option, name="Allow", kind="allow_once")])
    with caplog.at_level(logging.INFO, logger="shellexec.bridge"):
        asyncio.run(asked)
    assert messages(caplog) == [
        f"permission asked for {logged(title)}: selected {logged(option)}"]


# -- the agent -----------------------------------------------------------------------------


def test_an_agent_s_error_is_told_by_its_start() -> None:
    message, data = "m" * LONG, "d" * LONG
    assert failure_reason(RequestError(-32603, message, data)) == (
        f"{shown(message)} {shown(data)}")


class _Started:
    """An agent's connection that answers `initialize` naming the agent as told."""

    def __init__(self, name: str, version: str) -> None:
        self._info = Implementation(name=name, version=version)

    async def initialize(self, **params: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_info=self._info)

    async def new_session(self, **params: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=OURS)


def test_the_agent_s_name_and_version_are_logged_by_their_start(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    name, version = "n" * LONG, "v" * LONG
    handle = cast(AgentHandle, type("Handle", (), {"connection": _Started(name, version)}))
    files = FileAccess(tmp_path, read=False, write=False)
    with caplog.at_level(logging.INFO, logger="shellexec.bridge"):
        assert asyncio.run(open_acp_session(handle, tmp_path, files)) == OURS
    assert messages(caplog) == [
        f"agent {logged(name)} {logged(version)} speaks ACP v1"]

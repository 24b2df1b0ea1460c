"""The agent process and the ACP client connection to it.

- The agent is spawned in its own session (process group): Ctrl-C in a terminal signals the
  whole foreground group, and an agent killed by it could not receive `session/cancel` and
  report its running command. The bridge stops it itself (stdin EOF, then SIGTERM, SIGKILL to
  the group, so `npx` wrappers take their children along).
- Its stderr is relayed line by line to ours, prefixed, each line escaped (`log_text`): an
  unread pipe fills up (64 KiB) and then blocks a chatty agent in the middle of its work. So
  the relay reads it to the end whatever becomes of the bridge's own stderr (`stdio`).
- `session/update` notifications are handed to `record` by a raw stream observer, which the
  connection calls synchronously, in arrival order, with the JSON as sent, before the SDK
  parses it (the SDK would drop update types it does not know). See docs/adr/0030. The same
  observer hands the params of each `session/request_permission` to `asked`, in the same
  order (the tool call it announces, docs/adr/0131).
- The bridge reads the agent's stdout itself (`agent_stream.AgentStream`): a frame too long,
  too deep or not one JSON-RPC message is dropped before the SDK sees it, and the agent dies
  with the bridge even when the bridge is SIGKILLed (`process_guard`). See docs/adr/0122.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar, cast

from acp import PROTOCOL_VERSION, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

from shellexec.bridge.agent_stream import READ_BYTES, AgentStream
from shellexec.bridge.child_exit import Watched, exited_within, spawn_watched
from shellexec.bridge.errors import AgentError
from shellexec.bridge.files import FileAccess
from shellexec.bridge.handlers import BridgeClient
from shellexec.bridge.log_text import escaped, escaped_line
from shellexec.bridge.os_text import quoted_start
from shellexec.bridge.own_session import OwnSession
from shellexec.bridge.process_guard import ending_with_bridge
from shellexec.bridge.stdio import Stderr
from shellexec.bridge.waiting import noticing

T = TypeVar("T")
log = logging.getLogger("shellexec.bridge")
# How long the agent's start (`initialize`, `session/new`) may go unanswered before the bridge
# says it still waits.
STARTUP_NOTICE_SECONDS = 30.0

STDERR_PREFIX = b"[agent] "
_RELAY_CHUNK = 64 * 1024
_TERMINATE_GRACE = 2.0
# Once the agent process exited, what it wrote is in its stdout pipe already: the bridge reads
# on while more comes, each read waiting at most QUIET seconds, and for at most DRAIN seconds
# in all, since a process the agent started may hold the pipe open, and write to it, for ever.
EXITED_QUIET_SECONDS = 0.2
EXITED_DRAIN_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class AgentHandle:
    """A running agent: its ACP connection and its process."""

    connection: ClientSideConnection
    process: asyncio.subprocess.Process
    exited: asyncio.Event
    """Set once the agent process exited (its pipes may stay open longer: `child_exit`)."""

    def exit_note(self) -> str:
        code = self.process.returncode
        return "" if code is None else f" (agent exited with status {code})"


class OutputUntilExit:
    """The agent's stdout as `AgentStream` reads it (`read` alone): it ends where the pipe
    ends, or once the agent process itself exited and what it wrote was read, whichever comes
    first. A process the agent started in a session of its own (a `setsid` helper, a daemon)
    may hold the pipe open long after, for ever even: a pending `initialize` or prompt must
    then fail as the agent's exit, as it does when the pipe closes, not wait for that
    process (docs/bridge.md, "Ctrl-C and SIGTERM")."""

    def __init__(self, reader: asyncio.StreamReader, exited: asyncio.Event,
                 process: asyncio.subprocess.Process) -> None:
        self._reader = reader
        self._exited = exited
        self._process = process
        self._drain_until: float | None = None  # the loop's time, once the agent exited
        self._ended = False
        # One wait for the exit, made at the first read, that every read until the exit
        # waits on beside its own; cancelled once the output ends or is closed.
        self._exit: asyncio.Task[bool] | None = None

    async def read(self, size: int) -> bytes:
        """Up to `size` bytes; b"" at the end."""
        if self._ended:
            return b""
        if self._drain_until is None:
            chunk = await self._read_unless_exited(size)
            if chunk is not None:
                if not chunk:
                    await self._end()
                return chunk
            self._drain_until = asyncio.get_running_loop().time() + EXITED_DRAIN_SECONDS
        chunk = await self._drained(size)
        if not chunk:
            await self._end()
        return chunk

    async def close(self) -> None:
        """Ends the output (a later read answers b"") and the wait for the exit, once
        nothing reads any more."""
        await self._end()

    async def _end(self) -> None:
        self._ended = True
        exit_wait, self._exit = self._exit, None
        if exit_wait is not None and not exit_wait.done():
            exit_wait.cancel()
            await asyncio.wait({exit_wait})

    async def _read_unless_exited(self, size: int) -> bytes | None:
        """The next bytes, or None once the agent exited with none waiting. A read cancelled
        while it waits for data has taken none: nothing is lost."""
        if self._exit is None:
            self._exit = asyncio.ensure_future(self._exited.wait())
        reading = asyncio.ensure_future(self._reader.read(size))
        try:
            await asyncio.wait({reading, self._exit}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not reading.done():
                reading.cancel()
                await asyncio.wait({reading})
        return None if reading.cancelled() else reading.result()

    async def _drained(self, size: int) -> bytes:
        """What the exited agent left in the pipe; b"" once none came for a moment, or the
        drain's time is up."""
        assert self._drain_until is not None
        left = self._drain_until - asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(max(0.0, min(EXITED_QUIET_SECONDS, left))):
                return await self._reader.read(size)
        except TimeoutError:
            log.info("the agent exited (status %s) but a process it started still holds its "
                     "output open: not read further", self._process.returncode)
            return b""


def capabilities(files: FileAccess, host_terminals: bool = False) -> ClientCapabilities:
    """What the bridge offers: display-terminal output (`_meta`), terminals with
    `--host-terminals`, fs per flags."""
    return ClientCapabilities(
        terminal=host_terminals,
        fs=FileSystemCapabilities(read_text_file=files.read_enabled,
                                  write_text_file=files.write_enabled),
        field_meta={"terminal_output": True, "terminal_output_delta": True},
    )


def _client_info() -> Implementation:
    try:
        version = metadata.version("shellexec")
    except metadata.PackageNotFoundError:
        version = "0"
    return Implementation(name="shellexec-bridge", title="shellexec bridge", version=version)


def _update_observer(record: Callable[[object], None], asked: Callable[[object], None],
                     own: OwnSession, foreign: Callable[[str, object], None]
                     ) -> Callable[[StreamEvent], None]:
    asked_new: list[object] = []  # the JSON-RPC id of our `session/new` request

    def observe(event: StreamEvent) -> None:
        message = event.message
        if not isinstance(message, dict):
            return
        if event.direction is not StreamDirection.INCOMING:
            if message.get("method") == "session/new" and "id" in message:
                asked_new.append(message["id"])
            return
        result = message.get("result")
        if (own.id is None and asked_new and message.get("id") == asked_new[0]
                and isinstance(result, dict) and isinstance(result.get("sessionId"), str)):
            own.id = result["sessionId"]  # the answer to session/new, the run's one session
            return
        method = message.get("method")
        params = message.get("params")
        session = params.get("sessionId") if isinstance(params, dict) else None
        if method in ("session/update", "session/request_permission") and own.foreign(session):
            foreign(str(method), session)
        elif method == "session/update" and "id" not in message:
            record(params.get("update") if isinstance(params, dict) else None)
        elif method == "session/request_permission" and "id" in message:
            asked(params)

    return observe


def _program(name: str, env: Mapping[str, str], cwd: Path) -> str:
    """The file `name` runs, found as exec would: a name with a slash from `cwd`, any other
    on the agent's PATH. The launcher execs it, so the bridge must tell it is missing."""
    if "/" in name:
        candidate = str(cwd / name)
        found = candidate if os.access(candidate, os.X_OK) else None
    else:
        found = shutil.which(name, path=env.get("PATH", os.defpath))
    if found is None or os.path.isdir(found):
        raise AgentError("start", f"cannot run {name!r}: no such executable file")
    return found


async def _spawn(command: Sequence[str], env: Mapping[str, str], cwd: Path) -> Watched:
    argv = ending_with_bridge(_program(command[0], env, cwd), command)
    try:
        return await spawn_watched(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=dict(env), cwd=str(cwd),
            start_new_session=True, limit=READ_BYTES)
    except OSError as error:
        raise AgentError("start", f"cannot run {command[0]!r}: {error.strerror or error}"
                         ) from None


async def relay_stderr(stream: asyncio.StreamReader, sink: Stderr) -> None:
    """Copies the agent's stderr to `sink`, one prefixed, escaped line at a time, and reads
    it to its end even once `sink` is lost."""
    partial = b""
    while chunk := await stream.read(_RELAY_CHUNK):
        if sink.lost:
            continue
        *lines, partial = (partial + chunk).split(b"\n")
        if len(partial) >= _RELAY_CHUNK:  # a line without end: show it rather than hoard it
            lines, partial = [*lines, partial], b""
        sink.write(_relayed(lines))
    if partial:
        sink.write(_relayed([partial]))


def _relayed(lines: list[bytes]) -> bytes:
    return b"".join(STDERR_PREFIX + escaped_line(line) + b"\n" for line in lines)


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def _stop(process: asyncio.subprocess.Process, exited: asyncio.Event,
                grace: float) -> None:
    """EOF on stdin asks an ACP agent to exit; SIGTERM, then SIGKILL, make sure it does."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            process.stdin.close()
    if await exited_within(exited, grace):
        return
    _signal_group(process, signal.SIGTERM)
    if not await exited_within(exited, _TERMINATE_GRACE):
        _signal_group(process, signal.SIGKILL)
        await exited.wait()


@asynccontextmanager
async def running_agent(command: Sequence[str], env: Mapping[str, str], cwd: Path,
                        client: BridgeClient, record: Callable[[object], None],
                        asked: Callable[[object], None], shutdown_grace: float, *,
                        own: OwnSession, foreign: Callable[[str, object], None]
                        ) -> AsyncIterator[AgentHandle]:
    """Starts the agent; on exit closes the connection and stops the process. `record` gets
    each `session/update`'s update and `asked` each permission request's params, both in
    arrival order; `own` learns the session `session/new` opens, and `foreign` gets each
    update or permission request for another session instead."""
    process, exited, close_pipes = await _spawn(command, env, cwd)
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    relay = asyncio.create_task(relay_stderr(process.stderr, Stderr.of_process()))
    output = OutputUntilExit(process.stdout, exited, process)
    # AgentStream reads its reader with `read` alone, which OutputUntilExit serves.
    connection = connect_to_agent(client,
                                  AgentStream(cast(asyncio.StreamReader, output), process.stdin),
                                  observers=[_update_observer(record, asked, own, foreign)])
    try:
        yield AgentHandle(connection, process, exited)
    finally:
        await connection.close()  # its reads end with it
        await output.close()
        await _stop(process, exited, shutdown_grace)
        with contextlib.suppress(TimeoutError):  # grandchildren may hold stderr
            async with asyncio.timeout(_TERMINATE_GRACE):
                await relay  # cancelled with this await when the time is up
        close_pipes()  # what a grandchild still holds is no longer read


async def agent_step(handle: AgentHandle, stage: str, call: Awaitable[T],
                     notice_after: float | None = None) -> T:
    """Awaits one ACP request, turning every way it can fail into `AgentError(stage)`; says
    once that it still waits if no answer came within `notice_after` seconds."""
    try:
        return await _noticing(call, stage, notice_after)
    except Exception as error:  # RequestError, ConnectionError, a malformed answer ...
        if not isinstance(error, RequestError):
            # A lost connection usually means the agent died: a moment lets the message say
            # with which status, as a failed prompt's does. An error answer means it lives.
            await exited_within(handle.exited, 1.0)
        raise AgentError(stage, f"{failure_reason(error)}{handle.exit_note()}") from error


async def _noticing(call: Awaitable[T], stage: str, notice_after: float | None) -> T:
    """`call`'s answer; a warning once `notice_after` seconds passed without it. An agent
    that never answers its start keeps the bridge waiting (as a slow first `npx` download
    may, rightly): the user hears what it waits for, and that Ctrl-C stops it."""
    if notice_after is None:
        return await call
    return await noticing(call, notice_after, lambda: log.warning(
        "the agent has not answered %s after %.0f s; still waiting (Ctrl-C stops)", stage,
        notice_after))


def failure_reason(error: BaseException) -> str:
    """Why an ACP request failed, for the log: the error's message and data, which the agent
    wrote, escaped (`log_text`), each by its start only (`quoted_start`)."""
    data: Any = getattr(error, "data", None)
    text = quoted_start(str(error) or type(error).__name__)
    return escaped(f"{text} {quoted_start(str(data))}" if data else text)


async def open_acp_session(handle: AgentHandle, cwd: Path, files: FileAccess,
                           host_terminals: bool = False) -> str:
    """`initialize` with our capabilities, then `session/new`; returns the ACP session id."""
    connection = handle.connection
    started = await agent_step(handle, "initialize", connection.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=capabilities(files, host_terminals),
        client_info=_client_info()), STARTUP_NOTICE_SECONDS)
    info = started.agent_info
    # The agent names itself: quoted, so a newline in its name cannot forge a log line, and
    # by its start only.
    log.info("agent %s %s speaks ACP v%s", quoted_start(info.name if info else "?", repr),
             quoted_start(info.version if info else "", repr), started.protocol_version)
    session = await agent_step(handle, "session/new",
                               connection.new_session(cwd=str(cwd), mcp_servers=[]),
                               STARTUP_NOTICE_SECONDS)
    return session.session_id

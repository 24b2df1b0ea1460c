"""Terminals the bridge hosts for the agent (`--host-terminals`): ACP's client terminal
methods, and the exact output and exit status recorded into the tool call's record.

`terminal/create` runs the command line through a shell (`bash -c`, else `sh -c`; with
`args`, the command and its arguments shell-quoted), stdin closed, stdout and stderr joined
as a terminal shows them, in its own process group, in the requested directory if it lies
inside the bridge's `--cwd` tree (else in `--cwd`), with the bridge's allow-listed
environment plus the variables the agent asked for. `terminal/output` answers the newest
`outputByteLimit` bytes (`output_window`), `terminal/wait_for_exit` the shell's exit code or
signal, `terminal/kill` kills the command and everything it started and keeps the terminal,
`terminal/release` kills what still runs and forgets the terminal. A command still running
after `--terminal-timeout` seconds is killed, and on cancel and when the bridge stops
everything each terminal started is. Each command runs under a guard of its own
(`guarded_command`, ADR 0136), which ends what the command started even if it left the
shell's process group, and even when the bridge was SIGKILLed. This is not a sandbox: see
docs/bridge.md.

The output is read until it ends (every process holding it ended) or the terminal is released:
a background job the shell left prints on, into the window and the record, and is never left
blocked on a full pipe; `wait_for_exit` answers once the shell exited (and its output ended,
or for at most `_DRAIN_SECONDS`).

The command runs as the same user as its guard, so it may stop it (`kill -STOP $PPID`, again
and again) or kill it. Then the bridge ends the command itself (`_sweep`): a guard not gone
`_GUARD_PROMPT_SECONDS` after being told to end the command, or one that ended other than by
itself (the command killed it), has the bridge SIGKILL every process of the guard's session
(which the guard leads: the shell's process group and whatever stayed in the session) and of
its tree while it lives (what left the session with `setsid`), and what those started, and
the process groups they are in (the shell's through a pidfd taken when the command started,
and once the guard is gone the guard's own through a pidfd of the guard), so that a process
hopping from pid to pid in a group is ended too.

What the bridge records is ACP v2's terminal updates (ADR 0087): `terminal_update` with the
command and directory at create, a `terminal_output_chunk` per read of the output (the
forwarder merges those still waiting into one, bounded as the service bounds a stream), and a
`terminal_update` with `exitStatus` once the process ended. Each names the tool call the
terminal belongs to (`open_calls`) in `_meta.shellexec_tool_call_id`.

A terminal linked to a call by the fallback rules only (no content named it yet) is held for
up to `LINK_SECONDS`: nothing of it is recorded, since ACP's own flow names the terminal in
the call's content right after `terminal/create` answered, and that call may be another one.
What the service stored of a terminal's updates cannot be taken back: `output: null` and
`exitStatus: null` clear what they recorded, but the call stays a shell command whose output
the terminal owns (ADR 0085), so a file read became a second record of the other call's
command, and a command the agent ran itself lost its own output. The hold ends when a call's
content names the terminal (recorded there), or when the time is up, the call it was given
ends, the terminal is released or the terminals are stopped (recorded into the call it was
given, as it would have been: the command, the output so far as one chunk, the exit status
if known); from then on it is recorded as it goes. A call that names the terminal only after
that has it moved there: the bridge clears what it recorded into the first call and records
the terminal's output again into the call that named it (the first call then keeps a shell
command record without output).

While the bridge hosts the agent's terminals it alone reports terminals. An agent's own
terminal updates (ACP v1 has none: these are v2's) would rank with the bridge's in the record:
one naming a hosted terminal after its exit (the agent learns the id from `terminal/create`),
or one of a terminal of the agent's own that the tool call names or that carries the bridge's
`_meta.shellexec_tool_call_id`, overwrote the exact output and exit code with the agent's. So
every terminal update the agent sends is dropped (`forged`), counted as refused, and warned of
as frames are (`flood_log`).

A terminal created while no tool call is open belongs to no call yet, and the service would
hold its updates only up to a bound (ADR 0086). So the bridge records nothing of it while no
call names it: it keeps the newest output (`coalescing.OutputTail`), and records one
snapshot (command, directory, that output, the exit status once known) when a call names the
terminal or when its process ended, whichever comes first (ADR 0123).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import logging
import os
import shlex
import shutil
import signal
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from acp.exceptions import RequestError
from acp.schema import EnvVariable, TerminalExitStatus

from shellexec.bridge.child_exit import exited_within
from shellexec.bridge.coalescing import OutputTail
from shellexec.bridge.environment import validate_names
from shellexec.bridge.errors import UsageError
from shellexec.bridge.flood_log import FloodLog
from shellexec.bridge.guarded_command import (
    GUARD_GRACE_SECONDS,
    PIDFD_SIGNAL_PROCESS_GROUP,
    GuardedCommand,
)
from shellexec.bridge.open_calls import OpenCalls
from shellexec.bridge.os_text import quoted_start
from shellexec.bridge.output_window import MAX_WINDOWS_BYTES, OutputWindow
from shellexec.normalize.terminal_updates import is_terminal_update, terminal_id_of, terminal_refs
from shellexec.vocabulary import (
    ACP_TERMINAL_OUTPUT_CHUNK,
    ACP_TERMINAL_UPDATE,
    META_TERMINAL_TOOL_CALL,
)

log = logging.getLogger("shellexec.bridge")

_READ_BYTES = 64 * 1024
# How long `wait_for_exit` waits, once the shell exited, for the output to end (a background
# job may hold it open; its output is read on after that), and release for what is left of it
# once the command ended (a process the guard could not reach may hold it).
_DRAIN_SECONDS = 1.0
# How long a guard told to end its command may take before the bridge kills what it guards
# itself (it takes a round or two of 50 ms unless the command stops it).
_GUARD_PROMPT_SECONDS = 0.5
# How long a terminal linked to a call by the fallback rules alone is held unrecorded, for a
# call's content to name it (an agent names it right after `terminal/create` answered, or
# once a quick command exited); as long as live output is late for agents that never name
# their terminals (Goose, Kimi, Vibe).
LINK_SECONDS = 2.0
# How long the bridge waits between rounds of killing what a guard did not end, and how many
# rounds in a row must find nothing before it is done (a read of /proc can miss a process
# that forks and exits meanwhile).
_SWEEP_ROUND_SECONDS = 0.05
_SWEEP_EMPTY_ROUNDS = 4
# Terminals one agent may hold at once (created and not released): each has a guard process.
MAX_TERMINALS = 64

Record = Callable[[dict[str, Any]], None]

# The tally of a flood of terminal updates the agent sent while the bridge hosts terminals.
_FORGED_TALLY = ("agent sent {count} terminal updates of its own so far (the latest of "
                 "terminal {latest}): not recorded")
# How much of a terminal id the agent chose a warning quotes.
_QUOTED_ID_CHARS = 80
# The longest argument a new program gets on Linux, its terminating NUL included
# (MAX_ARG_STRLEN, 32 pages: 131072 bytes with 4 KiB pages); longer, exec fails with E2BIG.
# The command line is one argument of `bash -c` (and of the guard before it), and so is each
# NAME=value of the environment.
MAX_ARGUMENT_BYTES = 32 * os.sysconf("SC_PAGE_SIZE")
# How much of a command line a warning about one too long for the OS quotes.
_QUOTED_LINE_CHARS = 80
_WRITE_A_FILE = "write a long script to a file first and run that file"


def _size(text: str) -> int:
    """The bytes of `text` as the OS gets it (UTF-8)."""
    return len(text.encode("utf-8", "surrogatepass"))


def refuse_a_line_too_long(line: str) -> None:
    """Invalid params naming `command` when the command line is longer than one argument
    may be (`MAX_ARGUMENT_BYTES`); the answer does not repeat the command, and the warning
    quotes only its start."""
    size = _size(line)
    if size < MAX_ARGUMENT_BYTES:
        return
    longest = MAX_ARGUMENT_BYTES - 1
    reason = (f"the command line is {size} bytes (UTF-8, args included), over the {longest} "
              f"one argument of `bash -c` can hold (Linux's MAX_ARG_STRLEN, "
              f"{MAX_ARGUMENT_BYTES} with its NUL): {_WRITE_A_FILE}")
    log.warning("terminal/create of %r refused: %s", line[:_QUOTED_LINE_CHARS], reason)
    raise RequestError.invalid_params({"command": f"{size} bytes, not repeated here",
                                       "maxBytes": longest, "reason": reason})


def _too_big_to_start(line: str, env: Mapping[str, str]) -> RequestError:
    """Invalid params for a command the OS would not start (E2BIG) although its line fits one
    argument: one environment variable is longer than an argument may be, or the line and
    the environment together are more than a new program may get. Logged; the line is quoted
    only by its start."""
    for name, value in env.items():
        size = _size(name) + 1 + _size(value)
        if size >= MAX_ARGUMENT_BYTES:
            shown = quoted_start(name)
            reason = (f"the environment variable {shown} is {size} bytes as NAME=value, over "
                      f"the {MAX_ARGUMENT_BYTES - 1} one string of a new program's "
                      "environment can hold (Linux's MAX_ARG_STRLEN)")
            data: dict[str, Any] = {"env": shown, "reason": reason}
            break
    else:
        env_bytes = sum(_size(name) + _size(value) + 2 for name, value in env.items())
        reason = (f"the system would not start it (E2BIG, argument list too long): the command "
                  f"line ({_size(line)} bytes) and its environment ({len(env)} variables, "
                  f"{env_bytes} bytes) together are more than a new program may get (ARG_MAX "
                  f"here: {os.sysconf('SC_ARG_MAX')} bytes, pointers included); pass less "
                  f"in env, or {_WRITE_A_FILE}")
        data = {"command": f"{_size(line)} bytes, not repeated here", "reason": reason}
    log.warning("terminal/create of %r refused: %s", line[:_QUOTED_LINE_CHARS], reason)
    return RequestError.invalid_params(data)


@dataclass(slots=True)
class _Terminal:
    terminal_id: str
    command: str
    cwd: Path
    process: GuardedCommand
    window: OutputWindow
    call_id: str | None
    recorded: OutputTail = field(default_factory=OutputTail)
    status: TerminalExitStatus | None = None
    ended: asyncio.Task[TerminalExitStatus] | None = None
    timer: asyncio.TimerHandle | None = None
    # Reads the output until it ends (`_read`).
    reading: asyncio.Task[None] | None = None
    # Ends what is left of the command once its guard is gone (`_after_the_guard`).
    guarding: asyncio.Task[None] | None = None
    # Ends the command at kill, release, timeout or stop (`_end_command`), once started.
    ending: asyncio.Task[None] | None = None
    # Output arrived after the snapshot taken at the exit of a terminal no call names yet.
    late: bool = False
    # Linked to `call_id` by the fallback rules alone, and nothing of it recorded yet; the
    # hold ends at `link_timer` at the latest (`TerminalHost._settle`).
    held: bool = False
    link_timer: asyncio.TimerHandle | None = None


def shell_line(command: str, args: Sequence[str] | None) -> str:
    """The line the shell runs: the command as sent, or with its arguments shell-quoted."""
    return shlex.join([command, *args]) if args else command


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _exit_status(returncode: int) -> TerminalExitStatus:
    if returncode >= 0:
        return TerminalExitStatus(exit_code=returncode)
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"SIG{-returncode}"
    return TerminalExitStatus(exit_code=None, signal=name)


class TerminalHost:
    """The terminals of one bridge run."""

    def __init__(self, root: Path, environment: Mapping[str, str], timeout: float,
                 record: Record, calls: OpenCalls, link_seconds: float = LINK_SECONDS) -> None:
        self._root = Path(os.path.realpath(root))
        self._link_seconds = link_seconds
        self._environment = dict(environment)
        self._timeout = timeout
        self._record = record
        self._calls = calls
        self._terminals: dict[str, _Terminal] = {}
        self._forged = FloodLog(_FORGED_TALLY)
        # Terminals being started: they count towards MAX_TERMINALS before they exist, since
        # the agent may send its requests at once. `stop_all` ends them as they come up.
        self._starting = 0
        self._stops = 0
        # The endings of terminals the agent released, until they are done: no longer the
        # agent's to name, but `stop_all` still waits for them (the connection closing as the
        # bridge stops cancelled the release, and a command keeping its guard stopped ran on).
        self._releasing: set[asyncio.Future[None]] = set()

    # -- the ACP methods ---------------------------------------------------------------------

    async def create(self, command: str, args: Sequence[str] | None,
                     env: Sequence[EnvVariable] | None, cwd: str | None,
                     output_byte_limit: int | None) -> str:
        line = shell_line(command, args)
        refuse_a_line_too_long(line)
        if len(self._terminals) + self._starting >= MAX_TERMINALS:
            raise RequestError.invalid_request(
                {"reason": f"{MAX_TERMINALS} terminals are open; release one first"})
        if not line.strip():
            raise RequestError.invalid_params({"command": quoted_start(command),
                                               "reason": "is empty"})
        where = self._directory(cwd)
        stops = self._stops
        self._starting += 1
        try:
            process = await self._spawn(line, where, self._env(env))
        finally:
            self._starting -= 1
        if self._stops != stops:  # stopped while it started: nobody else would end it
            process.end()
            await process.ended()
            process.abandon()
            raise RequestError.invalid_request({"reason": "the terminals were stopped"})
        terminal_id = f"term_{uuid.uuid4().hex[:16]}"
        terminal = _Terminal(terminal_id, line, where, process, OutputWindow(output_byte_limit),
                             self._calls.fallback(line))
        self._terminals[terminal_id] = terminal
        self._share_windows()
        log.info("terminal %s: running %s in %s", terminal_id, quoted_start(line, repr),
                 quoted_start(str(where), repr))
        if terminal.call_id is not None:  # by the fallback rules: held until the link is sure
            terminal.held = True
            terminal.link_timer = asyncio.get_running_loop().call_later(
                self._link_seconds, self._settle, terminal)
        terminal.reading = asyncio.ensure_future(self._read(terminal))
        terminal.guarding = asyncio.ensure_future(self._after_the_guard(terminal))
        terminal.ended = asyncio.ensure_future(self._run(terminal))
        terminal.timer = asyncio.get_running_loop().call_later(
            self._timeout, self._time_out, terminal)
        return terminal_id

    def output(self, terminal_id: str) -> tuple[str, bool, TerminalExitStatus | None]:
        terminal = self._terminal(terminal_id)
        assert terminal.reading is not None
        text, truncated = terminal.window.text(complete=terminal.reading.done())
        return text, truncated, terminal.status

    async def wait_for_exit(self, terminal_id: str) -> TerminalExitStatus:
        terminal = self._terminal(terminal_id)
        assert terminal.ended is not None
        return await asyncio.shield(terminal.ended)

    def kill(self, terminal_id: str) -> None:
        terminal = self._terminal(terminal_id)
        if terminal.status is None:
            log.info("terminal %s: killed at the agent's request", terminal_id)
        self._end(terminal)

    async def release(self, terminal_id: str) -> None:
        terminal = self._terminal(terminal_id)
        del self._terminals[terminal_id]
        ending = asyncio.ensure_future(self._released(terminal))
        self._releasing.add(ending)
        ending.add_done_callback(self._releasing.discard)
        await asyncio.shield(ending)

    # -- the bridge's own ------------------------------------------------------------------

    def observe(self, update: object) -> None:
        """An agent update went by (recorded already): a hosted terminal its content names
        belongs to that call. One held for it is recorded now; one held for another call is
        recorded into this one alone; one recorded into another call already is cleared
        there and recorded again here."""
        for terminal_id in terminal_refs(update):
            terminal = self._terminals.get(terminal_id)
            named = self._calls.naming(terminal_id)
            if terminal is None or named is None:
                continue
            if named == terminal.call_id:
                self._settle(terminal)
                continue
            if not self._unhold(terminal) and terminal.call_id is not None:
                self._record(self._update(terminal, ACP_TERMINAL_UPDATE, output=None,
                                          exitStatus=None))
            self._calls.moved(terminal.call_id, named)
            terminal.call_id = named
            self._record(self._snapshot(terminal))

    def before_recording(self) -> None:
        """An agent update is about to be recorded, and the open calls have seen it: a
        terminal held for a call that is no longer open (this update ended it) is recorded
        into that call first, so that its output and exit come before the call's end, as
        when it is not held."""
        for terminal in list(self._terminals.values()):
            if terminal.held and not self._calls.is_open(terminal.call_id):
                self._settle(terminal)

    def forged(self, update: object) -> bool:
        """Whether `update`, which the agent sent, is a terminal update (`terminal_update`,
        `terminal_output_chunk`): while the bridge hosts terminals, it alone reports them
        (module docstring). Each one is warned of, as long as they are few."""
        if not is_terminal_update(update):
            return False
        assert isinstance(update, Mapping)  # is_terminal_update read its `sessionUpdate`
        terminal_id = terminal_id_of(update)
        named = "none" if terminal_id is None else repr(terminal_id[:_QUOTED_ID_CHARS])
        self._forged.note(f"agent sent a {update['sessionUpdate']} of terminal {named}: "
                          "while the bridge hosts terminals it alone reports them; not "
                          "recorded", named)
        return True

    async def stop_all(self) -> None:
        """Kills what every terminal started (cancel, the bridge stopping), and what those
        still starting start. The terminals end together: one after the other, commands that
        keep their guards stopped cost up to GUARD_GRACE_SECONDS each, and 24 of them kept
        a stopping bridge (deaf to a second Ctrl-C meanwhile) for 19 s."""
        self._stops += 1
        await asyncio.gather(*(self._ended(terminal) for terminal in self._terminals.values()),
                             *self._releasing)
        for terminal in list(self._terminals.values()):  # the turn ends: no call will name it
            self._settle(terminal)

    # -- inside ------------------------------------------------------------------------------

    def _terminal(self, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"terminalId": quoted_start(terminal_id),
                                               "reason": "no such terminal"})
        return terminal

    def _directory(self, cwd: str | None) -> Path:
        """The requested directory when it lies inside the root, else the root."""
        if not cwd:
            return self._root
        wanted = Path(os.path.realpath(self._root / cwd))
        try:
            if wanted.is_relative_to(self._root) and wanted.is_dir():
                return wanted
        except OSError:  # a name too long for the system, a directory it may not search
            pass
        log.warning("terminal: directory %s is outside --cwd or missing; running in %s",
                    quoted_start(cwd, repr), self._root)
        return self._root

    def _env(self, requested: Sequence[EnvVariable] | None) -> dict[str, str]:
        env = dict(self._environment)
        for variable in requested or ():
            try:
                validate_names([variable.name])
            except UsageError:
                raise RequestError.invalid_params(
                    {"env": quoted_start(variable.name), "reason": "not a variable name"}
                ) from None
            env[variable.name] = variable.value
        return env

    async def _spawn(self, line: str, cwd: Path, env: Mapping[str, str]
                     ) -> GuardedCommand:
        try:
            return await GuardedCommand.start(_shell(), line, cwd, env)
        except OSError as error:
            if error.errno == errno.E2BIG:
                raise _too_big_to_start(line, env) from None
            raise RequestError.internal_error(
                {"command": quoted_start(line), "reason": error.strerror or str(error)}
            ) from None

    async def _run(self, terminal: _Terminal) -> TerminalExitStatus:
        assert terminal.reading is not None
        returncode = await terminal.process.shell_exit()
        # What the shell printed is read before its exit is told; a background job holding
        # the output is read on after that (`_read`).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_SECONDS):
                await asyncio.shield(terminal.reading)
        if terminal.timer is not None:
            terminal.timer.cancel()
        terminal.status = _exit_status(returncode)
        log.info("terminal %s: exited (%s)", terminal.terminal_id,
                 terminal.status.signal or terminal.status.exit_code)
        if terminal.call_id is None:
            self._record(self._snapshot(terminal))
        elif not terminal.held:
            self._record(self._exit_update(terminal))
        return terminal.status

    async def _read(self, terminal: _Terminal) -> None:
        """Reads the output until every process holding it closed it (or the terminal is
        released), so that nothing the command left running blocks on a full pipe."""
        stream = terminal.process.stdout
        assert stream is not None
        try:
            while data := await stream.read(_READ_BYTES):
                terminal.window.append(data)
                terminal.recorded.append(data)
                if terminal.call_id is None:
                    if terminal.status is not None:  # after the snapshot taken at the exit
                        terminal.late = True
                elif not terminal.held:
                    self._record(self._chunk(terminal, data))
        finally:
            if terminal.late and terminal.call_id is None:
                terminal.late = False
                self._record(self._snapshot(terminal))

    def _time_out(self, terminal: _Terminal) -> None:
        if terminal.status is not None:
            return
        log.warning("terminal %s: still running after %g s (--terminal-timeout); killing it",
                    terminal.terminal_id, self._timeout)
        self._end(terminal)

    def _end(self, terminal: _Terminal) -> asyncio.Task[None]:
        """Tells the guard to end the command, and starts making sure it ends (once)."""
        terminal.process.end()
        if terminal.ending is None:
            terminal.ending = asyncio.ensure_future(self._end_command(terminal))
        return terminal.ending

    async def _end_command(self, terminal: _Terminal) -> None:
        """Waits until the guard ended the command; one that the command keeps stopping has
        the bridge kill what it guards itself."""
        process = terminal.process
        if await exited_within(process.guard_exited, _GUARD_PROMPT_SECONDS):
            return
        killed = await _sweep(process)
        if killed:
            log.warning("terminal %s: its guard had not ended the command %g s after being "
                        "told (the command may be stopping it); killed its %s",
                        terminal.terminal_id, _GUARD_PROMPT_SECONDS, _processes(killed))
        process.end()
        if not await process.ended():
            log.warning("terminal %s: its guard did not end within %g s; killed it and what "
                        "was left in its session, and what left that may still run",
                        terminal.terminal_id, GUARD_GRACE_SECONDS)

    async def _after_the_guard(self, terminal: _Terminal) -> None:
        """Once the guard is gone: if it did not end by itself (it does once the command and
        all it started ended, or once it ended them), the command may run on with no guard,
        so the bridge kills what is left in the guard's session."""
        process = terminal.process
        await process.guard_exited.wait()
        code = process.guard.returncode
        if code == 0:
            return
        told = terminal.ending is not None
        killed = await _sweep(process)
        if not told:
            how = f"by {_exit_status(code).signal}" if code is not None and code < 0 else (
                f"with code {code}")
            log.warning("terminal %s: its guard ended %s before the command (which may have "
                        "killed it); killed the %s left of the command",
                        terminal.terminal_id, how, _processes(killed))
        elif killed:
            log.warning("terminal %s: killed the %s left in its guard's session",
                        terminal.terminal_id, _processes(killed))

    def _share_windows(self) -> None:
        """Holds each open terminal's window to its share of MAX_WINDOWS_BYTES among the
        terminals open now: a window never grows back once a terminal closes, so the windows
        together stay within it."""
        share = MAX_WINDOWS_BYTES // len(self._terminals)
        for terminal in self._terminals.values():
            terminal.window.limit_to(share)

    def _unhold(self, terminal: _Terminal) -> bool:
        """Ends the hold of `terminal` without recording anything; whether it was held."""
        if terminal.link_timer is not None:
            terminal.link_timer.cancel()
            terminal.link_timer = None
        held, terminal.held = terminal.held, False
        return held

    def _settle(self, terminal: _Terminal) -> None:
        """Records a held terminal into the call it was given, as it would have been recorded
        as it went: its command and directory, the output so far as one chunk (the newest
        that the service would keep, `OutputTail`), and the exit status if it has one. A
        chunk adds to the output of another terminal of the call, where a snapshot would
        replace it."""
        if not self._unhold(terminal):
            return
        self._record(self._update(terminal, ACP_TERMINAL_UPDATE, command=terminal.command,
                                  cwd=str(terminal.cwd)))
        if data := terminal.recorded.data():
            self._record(self._chunk(terminal, data))
        if terminal.status is not None:
            self._record(self._exit_update(terminal))

    async def _released(self, terminal: _Terminal) -> None:
        """Ends a released terminal; one still held is recorded then: no call can name it
        any more."""
        await self._ended(terminal)
        self._settle(terminal)

    async def _ended(self, terminal: _Terminal) -> None:
        """Kills what the terminal's command started, waits until it has ended, and reads
        what is left of its output."""
        assert terminal.ended is not None
        assert terminal.guarding is not None
        assert terminal.reading is not None
        await asyncio.wait({self._end(terminal)})
        await asyncio.wait({terminal.guarding})
        reading = terminal.reading
        await asyncio.wait({reading}, timeout=_DRAIN_SECONDS)
        if not reading.done():  # held by a process out of the guard's reach: not read on
            reading.cancel()
            await asyncio.wait({reading})
        _close_pipes(terminal.process)
        await asyncio.wait({terminal.ended})

    def _update(self, terminal: _Terminal, kind: str, **fields: Any) -> dict[str, Any]:
        update: dict[str, Any] = {"sessionUpdate": kind, "terminalId": terminal.terminal_id,
                                  **fields}
        if terminal.call_id is not None:
            update["_meta"] = {META_TERMINAL_TOOL_CALL: terminal.call_id}
        return update

    def _chunk(self, terminal: _Terminal, data: bytes) -> dict[str, Any]:
        return self._update(terminal, ACP_TERMINAL_OUTPUT_CHUNK,
                            data=base64.b64encode(data).decode("ascii"))

    def _exit_update(self, terminal: _Terminal) -> dict[str, Any]:
        assert terminal.status is not None
        return self._update(terminal, ACP_TERMINAL_UPDATE, exitStatus=terminal.status
                            .model_dump(by_alias=True, exclude={"field_meta"}))

    def _snapshot(self, terminal: _Terminal) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "command": terminal.command, "cwd": str(terminal.cwd),
            "output": {"data": base64.b64encode(terminal.recorded.data()).decode("ascii")}}
        if terminal.status is not None:
            fields["exitStatus"] = terminal.status.model_dump(by_alias=True,
                                                              exclude={"field_meta"})
        return self._update(terminal, ACP_TERMINAL_UPDATE, **fields)


def _processes(count: int) -> str:
    return f"{count} process" if count == 1 else f"{count} processes"


class _Process(NamedTuple):
    """A process as one read of /proc saw it: its pid and its start time tell it from a
    later process given the same pid."""

    pid: int
    started: int


class _Stat(NamedTuple):
    state: str
    parent: int
    group: int
    session: int
    started: int


def _stat(pid: int) -> _Stat | None:
    """A process's state, parent, process group, session and start time, or None if it is
    gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return _Stat(fields[0], int(fields[1]), int(fields[2]), int(fields[3]),
                     int(fields[19]))
    except (OSError, IndexError, ValueError):
        return None


class _Found(NamedTuple):
    """What one read of /proc found of a command: its live processes, parents first, and
    its process groups, each with a process seen in it (a zombie of the guard's session
    counts: until it is reaped, its group's id cannot be given to another group)."""

    processes: list[_Process]
    groups: dict[int, _Process]


def _processes_of(guard: int, guard_alive: bool) -> _Found:
    """The live processes of the command a guard runs: every one in the guard's session
    (the guard leads it) and, while the guard lives, every one below it (a process that left
    the session is adopted by the guard once its parent ends), with all they started,
    parents first; never the guard itself. Their process groups, and those of the session's
    zombies, but not the guard's own while it lives (signalling it would kill the guard;
    once the guard is gone a process that joined its group is ended with it). Off Linux (no
    /proc), none.

    The session and the group are told by number, which is safe because an exited guard is
    not reaped until the command is let go (`GuardedCommand.forget_groups`, after every
    sweep): until then its pid, and so its session's and group's number, cannot be given to
    another process, whose own session would otherwise be swept as the command's. The newest
    pids are read first: a process that keeps forking and exiting (`_sweep`) is then likelier
    to be found alive."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return _Found([], {})
    table: dict[int, _Stat] = {}
    zombies: dict[int, _Process] = {}
    for pid in sorted((int(entry) for entry in entries if entry.isdigit()), reverse=True):
        seen = _stat(pid)
        if seen is None:
            continue
        if seen.state not in ("Z", "X"):
            table[pid] = seen
        elif seen.session == guard and seen.group != guard:
            zombies[seen.group] = _Process(pid, seen.started)
    below: dict[int, list[int]] = {}
    for pid, seen in table.items():
        below.setdefault(seen.parent, []).append(pid)
    reached = {pid for pid, seen in table.items()
               if seen.session == guard or (guard_alive and seen.parent == guard)
               } - {guard, os.getpid()}
    # Parents first: a shell killed before its child reports its own SIGKILL, not the
    # child's status (137).
    found = [pid for pid in reached if table[pid].parent not in reached]
    for pid in found:  # grows as it goes
        found.extend(child for child in below.get(pid, ()) if child not in found)
    processes = [_Process(pid, table[pid].started) for pid in found if pid != os.getpid()]
    groups = zombies | {table[process.pid].group: process for process in processes}
    groups.pop(os.getpgrp(), None)
    if guard_alive:  # the guard ends by its own means
        groups.pop(guard, None)
    return _Found(processes, groups)


@contextlib.contextmanager
def _pidfd(pid: int) -> Iterator[int | None]:
    """A pidfd of the process `pid`, closed afterwards; None when none can be had (the
    process is gone, or the kernel has no pidfds): the caller then goes by the number."""
    try:
        handle: int | None = os.pidfd_open(pid)
    except OSError:
        handle = None
    try:
        yield handle
    finally:
        if handle is not None:
            os.close(handle)


def _kill(process: _Process) -> bool:
    """SIGKILLs `process` unless it is gone (or another process has its pid by now); whether
    it was signalled. Through a pidfd taken before the check where there is one, so that the
    process checked is the one signalled; else by pid, as the guard signals."""
    with _pidfd(process.pid) as handle:
        try:
            found = _stat(process.pid)
            if found is None or found.started != process.started:
                return False
            if handle is None:
                os.kill(process.pid, signal.SIGKILL)
            else:
                signal.pidfd_send_signal(handle, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return False
    return True


def _kill_group(group: int, member: _Process) -> bool:
    """SIGKILLs the process group `group` if `member`, one of the command's processes seen in
    it, still is (so the id is still that group's); whether it was signalled. A group signal
    also ends a process being forked at that moment, which a process's own would miss.

    Through a pidfd of the group's leader where it is still there (pidfd_send_signal's
    PIDFD_SIGNAL_PROCESS_GROUP, Linux 6.9), so that no later group given the id is hit;
    else by its id, right after the check (an id is given again only once the kernel went
    round every pid)."""
    with _pidfd(group) as leader:
        try:
            seen = _stat(member.pid)
            if seen is None or seen.started != member.started or seen.group != group:
                return False
            if leader is not None:
                try:
                    signal.pidfd_send_signal(leader, signal.SIGKILL, None,
                                             PIDFD_SIGNAL_PROCESS_GROUP)
                    return True
                except OSError as error:
                    if error.errno != errno.EINVAL:  # ESRCH: none is left
                        return False
            os.killpg(group, signal.SIGKILL)  # a kernel before 6.9, or a group with no leader
        except (ProcessLookupError, PermissionError):
            return False
    return True


async def _sweep(command: GuardedCommand) -> int:
    """SIGKILLs the processes of the command its guard did not end, in rounds until none is
    left, for at most GUARD_GRACE_SECONDS; how many it killed (by pid: a group signal ends
    processes no round saw).

    Each round reads /proc, then signals the shell's process group through the pidfd
    `GuardedCommand` holds (and the guard's, through the guard's pidfd, once the guard has
    exited: a process of the command may have joined that group), every process group a
    process of the command was seen in, and each process it found. A process that forks and
    exits again and again ("pid hopping") is found by a read of /proc only by luck, since
    the read is not atomic; a group signal reaches it, and the child it is forking then, as
    long as it stays in a group the bridge knows of. And one round that found nothing does
    not end the sweep: it takes `_SWEEP_EMPTY_ROUNDS` in a row."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD_GRACE_SECONDS
    killed: set[_Process] = set()
    spared: set[_Process] = set()  # not ours to signal (set-user-ID), or gone meanwhile
    empty = 0
    while True:
        # By number only while the guard's pid is its own: reaped behind the bridge's back,
        # its number may be another session's already.
        found = (_processes_of(command.guard.pid, not command.guard_exited.is_set())
                 if command.guard.holds_its_pid else _Found([], {}))
        processes = [process for process in found.processes if process not in spared]
        command.kill_shell_group()
        command.kill_guard_group()
        for group, member in found.groups.items():
            _kill_group(group, member)
        for process in processes:  # a zombie by now if a group signal reached it
            (killed if _kill(process) else spared).add(process)
        empty = 0 if processes else empty + 1
        if empty >= _SWEEP_EMPTY_ROUNDS or loop.time() > deadline:
            return len(killed)
        await asyncio.sleep(_SWEEP_ROUND_SECONDS)


def _close_pipes(command: GuardedCommand) -> None:
    """Closes the guard's output pipe once the guard exited and nothing reads it any more.
    Left open, asyncio would close it once the loop is gone, with a traceback. Lets go of
    the shell's process group: nothing more is swept."""
    # Closed before the guard exited, it would meet the command's processes still writing
    # with a broken pipe (SIGPIPE): what they print would be lost, and they would end by it.
    if command.guard_exited.is_set():
        command.close_guard_pipes()
    command.forget_groups()

"""The client side of ACP: what the bridge answers when the agent calls it.

`session/update` notifications are NOT recorded here. The SDK runs every incoming message in
its own task, so a handler that awaits can be overtaken, and the SDK drops update types its
models do not know before a handler sees them. The bridge records updates from the
connection's raw stream observer instead (`agent.py`), synchronously and in arrival order.

An answer that can be large (`terminal/output`, `fs/read_text_file`: up to 16 MiB of text, six
bytes a character once JSON escapes a control character) is built only once its handler holds
an answer slot (`agent_stream.AnswerSlots`), which the transport gives back once the answer
has drained: an agent that asks again and again without reading the answers makes the bridge
hold one of them, not one per request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from acp.exceptions import RequestError
from acp.interfaces import Agent
from acp.schema import (
    CreateElicitationResponse,
    CreateTerminalResponse,
    ElicitationMode,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from shellexec.bridge import permissions
from shellexec.bridge.agent_stream import AnswerSlots
from shellexec.bridge.files import FileAccess
from shellexec.bridge.os_text import quoted_start, refuse_what_the_os_cannot_take
from shellexec.bridge.own_session import OwnSession
from shellexec.bridge.permissions import PermissionAnswer
from shellexec.bridge.terminal_params import refuse_marked
from shellexec.bridge.terminals import TerminalHost

log = logging.getLogger("shellexec.bridge")

def refuse_text_the_os_cannot_take(command: str, args: list[str] | None,
                                   env: list[EnvVariable] | None, cwd: str | None) -> None:
    """Invalid params naming the first field of a `terminal/create` that no command line,
    directory or environment can hold (a NUL byte, a lone surrogate)."""
    fields = [("command", command), ("cwd", cwd or "")]
    fields += [(f"args[{index}]", arg) for index, arg in enumerate(args or ())]
    for index, variable in enumerate(env or ()):
        fields += [(f"env[{index}].name", variable.name), (f"env[{index}].value", variable.value)]
    refuse_what_the_os_cannot_take(fields)


@contextmanager
def _logged(action: str, path: str) -> Iterator[None]:
    """Logs a file request and whether it was served (refusals matter when debugging). The
    path is the agent's: quoted, so a newline in it cannot forge a log line, and by its start
    only."""
    shown = quoted_start(path, repr)
    try:
        yield
    except RequestError as error:
        log.warning("agent asked to %s %s: refused (%s)", action, shown, error)
        raise
    log.info("agent asked to %s %s: done", action, shown)


class BridgeClient:
    """Answers permission and file requests by policy, and terminal requests when it hosts
    terminals; nothing here blocks on a human."""

    def __init__(self, answer: PermissionAnswer, files: FileAccess,
                 cancelling: Callable[[], bool], terminals: TerminalHost | None = None,
                 own: OwnSession | None = None, answers: AnswerSlots | None = None) -> None:
        self._answer = answer
        self._files = files
        self._cancelling = cancelling
        self._terminals = terminals
        self._own = own or OwnSession()
        self._answers = answers or AnswerSlots()

    def _host(self, method: str, session_id: str) -> TerminalHost:
        """The terminal host; without `--host-terminals` (`clientCapabilities.terminal`
        false) a call anyway is "method not found" rather than the SDK's silent `null`."""
        if self._terminals is None:
            raise RequestError.method_not_found(method)
        self._ours(session_id)
        return self._terminals

    def _ours(self, session_id: str) -> None:
        """Invalid params naming `sessionId` when the request is for another session."""
        if self._own.foreign(session_id):
            raise RequestError.invalid_params({
                "sessionId": quoted_start(session_id),
                "reason": "not the session this bridge opened"})

    async def create_terminal(self, session_id: str, command: str,
                              args: list[str] | None = None,
                              env: list[EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any
                              ) -> CreateTerminalResponse:
        host = self._host("terminal/create", session_id)
        refuse_marked(kwargs)  # a field the SDK read otherwise than the agent sent it
        refuse_text_the_os_cannot_take(command, args, env, cwd)
        terminal_id = await host.create(command, args, env, cwd, output_byte_limit)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any
                              ) -> TerminalOutputResponse:
        host = self._host("terminal/output", session_id)
        await self._answers.hold()
        output, truncated, status = host.output(terminal_id)
        return TerminalOutputResponse(output=output, truncated=truncated, exit_status=status)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any
                               ) -> ReleaseTerminalResponse | None:
        await self._host("terminal/release", session_id).release(terminal_id)
        return ReleaseTerminalResponse()

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any
                                     ) -> WaitForTerminalExitResponse:
        status = await self._host("terminal/wait_for_exit", session_id).wait_for_exit(terminal_id)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any
                            ) -> KillTerminalResponse | None:
        self._host("terminal/kill", session_id).kill(terminal_id)
        return KillTerminalResponse()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None  # recorded by the stream observer; see the module docstring

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption], **kwargs: Any
                                 ) -> RequestPermissionResponse:
        self._ours(session_id)
        # ACP: once the client sent session/cancel it must answer pending requests `cancelled`.
        response = (permissions.cancelled() if self._cancelling()
                    else permissions.choose(self._answer, options))
        log.info("permission asked for %s: %s",
                 quoted_start(tool_call.title or tool_call.tool_call_id, repr),
                 permissions.describe(response))
        return response

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        with _logged("read", path):
            self._ours(session_id)
            await self._answers.hold()
            return ReadTextFileResponse(content=await self._files.read(path, line, limit))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any
                              ) -> WriteTextFileResponse | None:
        with _logged("write", path):
            self._ours(session_id)
            await self._files.write(path, content)
        return WriteTextFileResponse()

    async def create_elicitation(self, message: str, mode: ElicitationMode, **kwargs: Any
                                 ) -> CreateElicitationResponse:
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Agent) -> None:
        return None

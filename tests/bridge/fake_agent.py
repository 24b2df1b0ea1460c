"""A scripted ACP agent for the bridge tests, speaking ACP over stdio through the SDK's agent side.

    python fake_agent.py SCRIPT RECORD [--report-env NAME,NAME]

SCRIPT is JSON Lines; on `session/prompt` the agent plays it, one step per line:

    {"update": {...}}                    one session/update, this params.update sent verbatim
    {"sleep": 0.05}                      pause
    {"mark": "streaming"}                append to record["marks"] (tests wait for marks)
    {"wait_for_cancel": 10}              wait at most N s for session/cancel
    {"wait_for_file": "/abs/path"}       wait (at most 30 s) until the test creates this file
    {"permission": {"toolCall": {...}, "options": [...]}}   ask; outcome -> record["permissions"]
    {"read_file": {"path": "/abs"}}      fs/read_text_file; result -> record["files"]
    {"write_file": {"path": "/abs", "content": "..."}}
    {"stderr": "text", "repeat": 1000}   write to stderr (the bridge must drain it)
    {"terminal": {"command": "...", "cwd": ..., "env": [...], "outputByteLimit": N},
     "as": "t1"}                         terminal/create; the id replaces "@t1" in later steps
    {"terminal_output": "t1"}            terminal/output
    {"terminal_wait": "t1"}              terminal/wait_for_exit
    {"terminal_kill": "t1"}              terminal/kill
    {"terminal_release": "t1"}           terminal/release
                                         (each answer -> record["terminals"], in order)
    {"exit": 3}                          die at once with this status
    {"together": [step, ...]}            play these steps at once (requests sent concurrently)
    {"stop": "max_tokens"}               the stop reason (default end_turn; cancelled after cancel)

RECORD is a JSON file, rewritten after every event, of what the agent received: the raw params
of `initialize`, `session/new`, `session/prompt` and each `session/cancel`, plus the answers to
its requests, its marks, the names of its environment variables and the values of the names
given with --report-env.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, cast

from acp import run_agent
from acp.agent.connection import AgentSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.interfaces import Agent, Client
from acp.schema import (
    AgentCapabilities,
    EnvVariable,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    StopReason,
    ToolCallUpdate,
)

Step = dict[str, Any]
RECORDED_METHODS = ("initialize", "session/new", "session/prompt", "session/cancel")


class Recorder:
    """The RECORD file: every change is written at once, atomically."""

    def __init__(self, path: Path, report_env: list[str]) -> None:
        self._path = path
        self.data: dict[str, Any] = {
            "session/cancel": [], "permissions": [], "files": [], "marks": [], "terminals": [],
            "env_names": sorted(os.environ),
            "env": {name: os.environ.get(name) for name in report_env},
        }
        self.save()

    def save(self) -> None:
        partial = self._path.with_suffix(".partial")
        partial.write_text(json.dumps(self.data))
        os.replace(partial, self._path)

    def add(self, key: str, value: Any) -> None:
        self.data[key].append(value)
        self.save()

    def observe(self, event: StreamEvent) -> None:
        method = event.message.get("method")
        if event.direction is StreamDirection.INCOMING and method in RECORDED_METHODS:
            params = event.message.get("params")
            if method == "session/cancel":
                self.data[method].append(params)
            else:
                self.data[method] = params
            self.save()


def _error(error: RequestError) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": str(error), "data": error.data}}


class FakeAgent:
    """Plays the script on every prompt."""

    def __init__(self, script: list[Step], recorder: Recorder) -> None:
        self._script = script
        self._recorder = recorder
        self._cancelled = asyncio.Event()
        self._conn: AgentSideConnection | None = None
        self._terminal_ids: dict[str, str] = {}

    def on_connect(self, conn: Client) -> None:
        assert isinstance(conn, AgentSideConnection)
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version,
                                  agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="fake-agent", version="1.0"))

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="fake-session-1")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        stop: StopReason = "end_turn"
        for step in self._script:
            stop = cast(StopReason, step["stop"]) if "stop" in step else stop
            await self._play(session_id, step)
        return PromptResponse(stop_reason="cancelled" if self._cancelled.is_set() else stop)

    def _with_terminal_ids(self, step: Step) -> Step:
        text = json.dumps(step)
        for name, terminal_id in self._terminal_ids.items():
            text = text.replace(f'"@{name}"', json.dumps(terminal_id))
        played: Step = json.loads(text)
        return played

    async def _play(self, session_id: str, step: Step) -> None:
        step = self._with_terminal_ids(step)
        if "together" in step:
            await asyncio.gather(*(self._play(session_id, each) for each in step["together"]))
        elif any(key.startswith("terminal") for key in step):
            await self._terminal(session_id, step)
        elif "update" in step:
            await self._connection()._conn.send_notification(
                "session/update", {"sessionId": session_id, "update": step["update"]})
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]))
        elif "mark" in step:
            self._recorder.add("marks", step["mark"])
        elif "wait_for_cancel" in step:
            await asyncio.wait_for(self._cancelled.wait(), float(step["wait_for_cancel"]))
        elif "wait_for_file" in step:
            await asyncio.wait_for(_appears(Path(step["wait_for_file"])), 30)
        elif "stderr" in step:
            self._write_stderr(str(step["stderr"]), int(step.get("repeat", 1)))
        elif "exit" in step:
            os._exit(int(step["exit"]))
        else:
            await self._request(session_id, step)

    async def _request(self, session_id: str, step: Step) -> None:
        try:
            if "permission" in step:
                self._recorder.add("permissions", await self._ask(session_id, step["permission"]))
            elif "read_file" in step:
                read = await self._connection().read_text_file(session_id=session_id,
                                                               **step["read_file"])
                self._recorder.add("files", {"content": read.content})
            elif "write_file" in step:
                await self._connection().write_text_file(session_id=session_id,
                                                         **step["write_file"])
                self._recorder.add("files", {"written": step["write_file"]["path"]})
        except RequestError as error:
            key = "permissions" if "permission" in step else "files"
            self._recorder.add(key, _error(error))

    async def _terminal(self, session_id: str, step: Step) -> None:
        conn = self._connection()
        kind = next(key for key in step if key.startswith("terminal"))
        answer: Any = None
        try:
            if kind == "terminal":
                request = step["terminal"]
                created = await conn.create_terminal(
                    session_id=session_id, command=request["command"],
                    args=request.get("args"), cwd=request.get("cwd"),
                    env=[EnvVariable.model_validate(e) for e in request.get("env", [])],
                    output_byte_limit=request.get("outputByteLimit"))
                self._terminal_ids[step["as"]] = created.terminal_id
                answer = created
            else:
                terminal_id = self._terminal_ids.get(str(step[kind]), str(step[kind]))
                call = {"terminal_output": conn.terminal_output,
                        "terminal_wait": conn.wait_for_terminal_exit,
                        "terminal_kill": conn.kill_terminal,
                        "terminal_release": conn.release_terminal}[kind]
                answer = await call(session_id=session_id, terminal_id=terminal_id)
            dumped = {} if answer is None else answer.model_dump(mode="json", by_alias=True)
            self._recorder.add("terminals", {"step": kind, **dumped})
        except RequestError as error:
            self._recorder.add("terminals", {"step": kind, **_error(error)})

    async def _ask(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        response = await self._connection().request_permission(
            session_id=session_id, tool_call=ToolCallUpdate.model_validate(request["toolCall"]),
            options=[PermissionOption.model_validate(o) for o in request["options"]])
        return response.model_dump(mode="json", by_alias=True, exclude_none=True)

    @staticmethod
    def _write_stderr(text: str, repeat: int) -> None:
        for _ in range(repeat):
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def _connection(self) -> AgentSideConnection:
        assert self._conn is not None
        return self._conn


async def _appears(path: Path) -> None:
    while not path.exists():
        await asyncio.sleep(0.01)


def _script(path: Path) -> list[Step]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def _main(script: Path, record: Path, report_env: list[str]) -> None:
    recorder = Recorder(record, report_env)
    agent = FakeAgent(_script(script), recorder)
    # FakeAgent implements the methods the bridge calls; the SDK answers the rest itself.
    await run_agent(cast(Agent, agent), observers=[recorder.observe])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("script", type=Path)
    parser.add_argument("record", type=Path)
    parser.add_argument("--report-env", default="")
    args = parser.parse_args()
    names = [name for name in args.report_env.split(",") if name]
    asyncio.run(_main(args.script, args.record, names))


if __name__ == "__main__":
    main()

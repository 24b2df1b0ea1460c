"""ACP `params.update` objects shaped like each provider's adapter sends them (the shapes are
described per agent in docs/normalization.md): the demo uses the real shapes, not a
simplified one."""

from __future__ import annotations

from shellexec.demo.steps import Pause, Publish, Step, Update
from shellexec.vocabulary import (
    ACP_AGENT_MESSAGE_CHUNK,
    ACP_COMPLETED,
    ACP_FAILED,
    ACP_IN_PROGRESS,
    ACP_PENDING,
    ACP_TOOL_CALL,
    ACP_TOOL_CALL_UPDATE,
    ACP_USER_MESSAGE_CHUNK,
    AUTHOR_USER,
    AcpToolStatus,
    AuthorType,
)


def text(author: AuthorType, message: str, chunks: int = 3) -> list[Step]:
    """A chat message streamed in a few chunks, as agents do (`author`: user or agent)."""
    kind = ACP_USER_MESSAGE_CHUNK if author == AUTHOR_USER else ACP_AGENT_MESSAGE_CHUNK
    size = max(1, -(-len(message) // chunks))
    return [Publish({"sessionUpdate": kind, "content": {"type": "text", "text": part}})
            for part in (message[i:i + size] for i in range(0, len(message), size))]


def _ended(exit_code: int) -> AcpToolStatus:
    """The status an agent reports for a command that exited with `exit_code`."""
    return ACP_COMPLETED if exit_code == 0 else ACP_FAILED


# ---- Codex ------------------------------------------------------------------------------------

def codex_rust_start(call: str, command: str, work_dir: str) -> Update:
    """Rust codex-acp, terminal mode: argv in rawInput, the terminal in _meta."""
    return {"sessionUpdate": ACP_TOOL_CALL, "toolCallId": call, "title": command,
            "kind": "execute", "status": ACP_IN_PROGRESS,
            "content": [{"type": "terminal", "terminalId": call}],
            "rawInput": {"call_id": call, "process_id": "1000", "turn_id": "1",
                         "command": ["/bin/bash", "-lc", command], "cwd": work_dir,
                         "parsed_cmd": [{"type": "unknown", "cmd": command}],
                         "source": "unified_exec_startup"},
            "_meta": {"terminal_info": {"terminal_id": call, "cwd": work_dir}}}


def codex_rust_end(call: str, command: str, work_dir: str, output: str, exit_code: int) -> Update:
    """Rust codex-acp end event: the whole ExecCommandEndEvent as rawOutput."""
    raw = {"call_id": call, "process_id": "1000", "turn_id": "1",
           "command": ["/bin/bash", "-lc", command], "cwd": work_dir,
           "source": "unified_exec_startup", "stdout": output, "stderr": "",
           "aggregated_output": output, "exit_code": exit_code,
           "duration": {"secs": 0, "nanos": 87_000_000}, "formatted_output": output,
           "status": _ended(exit_code)}
    return {"sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call,
            "status": _ended(exit_code), "rawOutput": raw,
            "_meta": {"terminal_exit": {"terminal_id": call, "exit_code": exit_code,
                                        "signal": None}}}


def codex_rust(call: str, command: str, work_dir: str, output: str, exit_code: int) -> list[Step]:
    steps: list[Step] = [Publish(codex_rust_start(call, command, work_dir)), Pause(0.6)]
    if output:
        steps.append(Publish({"sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call,
                              "_meta": {"terminal_output": {"terminal_id": call,
                                                            "data": output}}}))
    steps.append(Publish(codex_rust_end(call, command, work_dir, output, exit_code)))
    return steps


def codex_ts_start(call: str, command: str, work_dir: str) -> Update:
    """TypeScript codex-acp (on codex app-server): rawInput {command, cwd}."""
    return {"sessionUpdate": ACP_TOOL_CALL, "toolCallId": call, "name": "exec_command",
            "kind": "execute", "title": command, "status": ACP_IN_PROGRESS,
            "content": [{"type": "terminal", "terminalId": call}],
            "rawInput": {"command": command, "cwd": work_dir},
            "_meta": {"terminal_info": {"cwd": work_dir, "terminal_id": call}}}


def codex_ts_delta(call: str, data: str) -> Update:
    return {"sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call,
            "_meta": {"terminal_output_delta": {"data": data, "terminal_id": call}}}


def codex_ts_exit(call: str, exit_code: int) -> Update:
    """The end of a terminal command: no rawOutput, the exit code only in _meta."""
    return {"sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call,
            "status": _ended(exit_code),
            "_meta": {"terminal_exit": {"exit_code": exit_code, "signal": None,
                                        "terminal_id": call}}}


def codex_ts_stream(call: str, command: str, work_dir: str, chunks: list[str], every: float,
                    exit_code: int | None) -> list[Step]:
    """A command streaming `chunks`, `every` seconds apart; `exit_code` None leaves it
    running (the turn's end will cancel it)."""
    steps: list[Step] = [Publish(codex_ts_start(call, command, work_dir))]
    for chunk in chunks:
        steps += [Pause(every), Publish(codex_ts_delta(call, chunk))]
    if exit_code is not None:
        steps += [Pause(every), Publish(codex_ts_exit(call, exit_code))]
    return steps


# ---- Claude -------------------------------------------------------------------------------

def claude_terminal(call: str, command: str, description: str, output: str,
                    exit_code: int) -> list[Step]:
    """claude-agent-acp with the terminal_output capability: the command arrives after the
    call, the whole output in one terminal_output chunk, then terminal_exit."""
    meta = {"claudeCode": {"toolName": "Bash"}}
    return [
        Publish({"_meta": {**meta, "terminal_info": {"terminal_id": call}},
                 "toolCallId": call, "sessionUpdate": ACP_TOOL_CALL, "name": "Bash",
                 "rawInput": {}, "status": ACP_PENDING, "title": "Terminal", "kind": "execute",
                 "content": [{"type": "terminal", "terminalId": call}]}),
        Publish({"_meta": meta, "toolCallId": call, "sessionUpdate": ACP_TOOL_CALL_UPDATE,
                 "rawInput": {"command": command}, "title": command}),
        Publish({"_meta": meta, "toolCallId": call, "sessionUpdate": ACP_TOOL_CALL_UPDATE,
                 "rawInput": {"command": command, "description": description}}),
        Pause(0.8),
        Publish({"_meta": {"terminal_output": {"terminal_id": call, "data": output}},
                 "toolCallId": call, "sessionUpdate": ACP_TOOL_CALL_UPDATE}),
        Publish({"_meta": {**meta, "terminal_exit": {"terminal_id": call,
                                                     "exit_code": exit_code,
                                                     "signal": None}},
                 "toolCallId": call, "sessionUpdate": ACP_TOOL_CALL_UPDATE,
                 "status": _ended(exit_code)}),
    ]


# ---- OpenCode -----------------------------------------------------------------------------

def opencode(call: str, command: str, work_dir: str, snapshots: list[str],
             exit_code: int) -> list[Step]:
    """`opencode acp`: cumulative content snapshots, then `completed` whatever the exit code,
    which is only in rawOutput.metadata.exit."""
    running = {"sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call,
               "status": ACP_IN_PROGRESS, "kind": "execute", "title": command,
               "locations": [{"path": work_dir}], "rawInput": {"command": command, "cwd": work_dir}}
    steps: list[Step] = [
        Publish({"sessionUpdate": ACP_TOOL_CALL, "toolCallId": call, "title": "bash",
                 "kind": "execute", "status": ACP_PENDING, "locations": [{"path": work_dir}],
                 "rawInput": {"cwd": work_dir}}),
        Publish(running),
    ]
    for snapshot in snapshots:
        steps += [Pause(0.5), Publish({**running, "content": [
            {"type": "content", "content": {"type": "text", "text": snapshot}}]})]
    final = snapshots[-1] if snapshots else ""
    steps.append(Publish({
        "sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call, "status": ACP_COMPLETED,
        "title": command,
        "content": [{"type": "content", "content": {"type": "text", "text": final}}],
        "rawOutput": {"output": final, "metadata": {"output": final, "exit": exit_code,
                                                    "truncated": False}}}))
    return steps


# ---- Auggie -------------------------------------------------------------------------------

def auggie(call: str, command: str, work_dir: str, output: str, exit_code: int) -> list[Step]:
    """`auggie --acp`: no status until the end; the result is XML-like text in rawOutput."""
    result = ("Here are the results from executing the command.\n"
              f"<return-code>\n{exit_code}\n</return-code>\n<output>\n{output}\n</output>")
    return [
        Publish({"sessionUpdate": ACP_TOOL_CALL, "toolCallId": call,
                 "title": f"Run `{command}`", "kind": "execute", "content": [],
                 "rawInput": {"command": command, "wait": True, "max_wait_seconds": 600,
                              "cwd": work_dir}}),
        Pause(1.2),
        Publish({"sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call,
                 "status": _ended(exit_code),
                 "rawOutput": {"output": result}}),
    ]


# ---- OMP (oh-my-pi) -----------------------------------------------------------------------

def omp(call: str, command: str, output: str) -> list[Step]:
    """`omp acp`: a `$ command` content block glued to the output, no exit code on success."""
    echo = f"$ {command}"
    return [
        Publish({"sessionUpdate": ACP_TOOL_CALL, "toolCallId": call, "title": echo,
                 "kind": "execute", "status": ACP_PENDING, "rawInput": {"command": command},
                 "content": [{"type": "content", "content": {"type": "text", "text": echo}}]}),
        Pause(0.4),
        Publish({"sessionUpdate": ACP_TOOL_CALL_UPDATE, "toolCallId": call,
                 "status": ACP_COMPLETED,
                 "rawOutput": {"details": {"timeoutSeconds": 300, "wallTimeMs": 15.2}},
                 "content": [{"type": "content",
                              "content": {"type": "text", "text": echo + output}}]}),
    ]

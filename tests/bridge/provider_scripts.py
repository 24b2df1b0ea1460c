"""Fake-agent scripts per provider, in the providers' shapes: the recorded fixtures, a long
streaming command, and a command still running when the prompt is cancelled."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from support.acp import fixture_names, load_fixture

Update = dict[str, Any]
Step = dict[str, Any]
PROVIDERS = ("codex", "claude", "opencode", "auggie", "omp")
CWD = "/home/dev/proj"


def _renamed(update: Update, old: str, new: str) -> Update:
    renamed: Update = json.loads(json.dumps(update).replace(old, new))
    return renamed


def fixture_updates(provider: str) -> list[Update]:
    """Every recorded sequence of the provider, one after the other. Fixtures reuse tool call
    ids, so each fixture's ids get a suffix (everywhere: terminal ids repeat them)."""
    updates: list[Update] = []
    for number, name in enumerate(n for n in fixture_names() if n.startswith(f"{provider}-")):
        sequence = load_fixture(name)
        ids = {str(u["toolCallId"]) for u in sequence if "toolCallId" in u}
        for update in sequence:
            for old in ids:
                update = _renamed(update, old, f"{old}-f{number}")
            updates.append(update)
    return updates


def _lines(count: int) -> list[str]:
    return [f"line {n:04d} of the long build\n" for n in range(count)]


def _codex(call_id: str, chunks: list[str], finish: bool) -> list[Update]:
    start: Update = {
        "sessionUpdate": "tool_call", "toolCallId": call_id, "title": "make build",
        "kind": "execute", "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": call_id}],
        "rawInput": {"call_id": call_id, "command": ["/bin/bash", "-lc", "make build"],
                     "cwd": CWD, "parsed_cmd": [{"type": "unknown", "cmd": "make build"}]},
        "_meta": {"terminal_info": {"terminal_id": call_id, "cwd": CWD}}}
    deltas = [{"sessionUpdate": "tool_call_update", "toolCallId": call_id,
               "_meta": {"terminal_output": {"terminal_id": call_id, "data": chunk}}}
              for chunk in chunks]
    output = "".join(chunks)
    end: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                   "status": "completed",
                   "rawOutput": {"stdout": output, "stderr": "", "aggregated_output": output,
                                 "exit_code": 0, "formatted_output": output},
                   "_meta": {"terminal_exit": {"terminal_id": call_id, "exit_code": 0,
                                               "signal": None}}}
    return [start, *deltas, *([end] if finish else [])]


def _claude(call_id: str, chunks: list[str], finish: bool) -> list[Update]:
    meta = {"claudeCode": {"toolName": "Bash"}}
    start: Update = {"sessionUpdate": "tool_call", "toolCallId": call_id, "name": "Bash",
                     "rawInput": {}, "status": "pending", "title": "Terminal",
                     "kind": "execute", "content": [{"type": "terminal", "terminalId": call_id}],
                     "_meta": {**meta, "terminal_info": {"terminal_id": call_id}}}
    refine: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "_meta": meta,
                      "rawInput": {"command": "make build", "description": "Build"},
                      "title": "make build"}
    # With terminal_output_delta advertised, recent claude-agent-acp uses the delta key.
    deltas = [{"sessionUpdate": "tool_call_update", "toolCallId": call_id,
               "_meta": {"terminal_output_delta": {"terminal_id": call_id, "data": chunk}}}
              for chunk in chunks]
    end: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                   "status": "completed",
                   "_meta": {**meta, "terminal_exit": {"terminal_id": call_id, "exit_code": 0,
                                                       "signal": None}}}
    return [start, refine, *deltas, *([end] if finish else [])]


def _opencode(call_id: str, chunks: list[str], finish: bool) -> list[Update]:
    start: Update = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "bash",
                     "kind": "execute", "status": "pending", "locations": [{"path": CWD}],
                     "rawInput": {"cwd": CWD}}
    running = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
               "status": "in_progress", "kind": "execute", "title": "make build",
               "locations": [{"path": CWD}], "rawInput": {"command": "make build", "cwd": CWD}}
    snapshots = [{**running, "content": [{"type": "content", "content": {
        "type": "text", "text": "".join(chunks[:n + 1])}}]} for n in range(len(chunks))]
    output = "".join(chunks)
    end: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                   "status": "completed", "title": "make build",
                   "content": [{"type": "content", "content": {"type": "text", "text": output}}],
                   "rawOutput": {"output": output, "metadata": {"output": output, "exit": 0,
                                                                "truncated": False}}}
    return [start, running, *snapshots, *([end] if finish else [])]


def _auggie(call_id: str, chunks: list[str], finish: bool) -> list[Update]:
    # Auggie streams nothing: the whole output arrives with the result.
    start: Update = {"sessionUpdate": "tool_call", "toolCallId": call_id,
                     "title": "Run `make build`", "kind": "execute", "content": [],
                     "rawInput": {"command": "make build", "wait": True,
                                  "max_wait_seconds": 600, "cwd": CWD}}
    text = ("Here are the results from executing the command.\n<return-code>\n0\n"
            f"</return-code>\n<output>\n{''.join(chunks)}\n</output>")
    end: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                   "status": "completed", "rawOutput": {"output": text}}
    return [start, *([end] if finish else [])]


def _omp(call_id: str, chunks: list[str], finish: bool) -> list[Update]:
    echo = {"type": "content", "content": {"type": "text", "text": "$ make build"}}
    start: Update = {"sessionUpdate": "tool_call", "toolCallId": call_id,
                     "title": "$ make build", "kind": "execute", "status": "pending",
                     "rawInput": {"command": "make build"}, "content": [echo]}
    progress = []
    for n in range(len(chunks)):
        text = "".join(chunks[:n + 1])
        progress.append({
            "sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "status": "in_progress",
            "rawOutput": {"content": [{"type": "text", "text": text}], "details": {}},
            "content": [echo, {"type": "content", "content": {"type": "text", "text": text}},
                        {"type": "content", "content": {"type": "text",
                                                        "text": text.rstrip("\n")}}]})
    final = "".join(chunks) + "\n\nWall time: 1.20 seconds"
    end: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                   "status": "completed",
                   "rawOutput": {"content": [{"type": "text", "text": final}],
                                 "details": {"timeoutSeconds": 300, "wallTimeMs": 1200.5}},
                   "content": [echo, {"type": "content", "content": {"type": "text",
                                                                     "text": final}}]}
    return [start, *progress, *([end] if finish else [])]


_BUILDERS: dict[str, Callable[[str, list[str], bool], list[Update]]] = {
    "codex": _codex, "claude": _claude, "opencode": _opencode, "auggie": _auggie, "omp": _omp}


def long_stream(provider: str, call_id: str, lines: int = 120) -> list[Update]:
    """A long command streamed the provider's way, then completed."""
    return _BUILDERS[provider](call_id, _lines(lines), True)


def unfinished(provider: str, call_id: str, lines: int = 20) -> list[Update]:
    """A command that has streamed `lines` lines and is still running."""
    return _BUILDERS[provider](call_id, _lines(lines), False)


def say(text: str) -> Update:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def steps(updates: list[Update], pause_every: int = 0, pause: float = 0.0) -> list[Step]:
    """Script steps sending `updates`, pausing `pause` s after every `pause_every` updates."""
    played: list[Step] = []
    for number, update in enumerate(updates, start=1):
        played.append({"update": update})
        if pause_every and number % pause_every == 0:
            played.append({"sleep": pause})
    return played

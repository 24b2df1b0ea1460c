"""Small builders of ACP `params.update` objects, shaped like what real agents send
(see docs/normalization.md, per agent), and access to the recorded fixture sequences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "acp"

Update = dict[str, Any]


def fixture_names() -> list[str]:
    return sorted(path.stem for path in FIXTURES.glob("*.jsonl"))


def load_fixture(name: str) -> list[Update]:
    lines = (FIXTURES / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def codex_start(call_id: str, command: str, work_dir: str = "/home/dev/proj") -> Update:
    return {
        "sessionUpdate": "tool_call", "toolCallId": call_id, "title": command,
        "kind": "execute", "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": call_id}],
        "rawInput": {"call_id": call_id, "command": ["/bin/bash", "-lc", command], "cwd": work_dir,
                     "parsed_cmd": [{"type": "unknown", "cmd": command}]},
        "_meta": {"terminal_info": {"terminal_id": call_id, "cwd": work_dir}},
    }


def codex_delta(call_id: str, data: str) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "_meta": {"terminal_output": {"terminal_id": call_id, "data": data}}}


def codex_end(call_id: str, output: str, exit_code: int) -> Update:
    return {
        "sessionUpdate": "tool_call_update", "toolCallId": call_id,
        "status": "completed" if exit_code == 0 else "failed",
        "rawOutput": {"stdout": output, "stderr": "", "aggregated_output": output,
                      "exit_code": exit_code, "formatted_output": output},
        "_meta": {"terminal_exit": {"terminal_id": call_id, "exit_code": exit_code,
                                    "signal": None}},
    }


def opencode_running(call_id: str, command: str, snapshot: str) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "status": "in_progress", "kind": "execute", "title": command,
            "rawInput": {"command": command, "cwd": "/home/dev/proj"},
            "content": [{"type": "content", "content": {"type": "text", "text": snapshot}}]}


def agent_text(text: str) -> Update:
    return {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text}}

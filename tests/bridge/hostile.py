"""Running the real bridge on the hostile raw agent (`raw_agent.py`), which plays a script of
frames, requests and probes that no SDK would send."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bridge.harness import Finished, Launched, launch

from support.stack import Stack

PROMPT = "Do it."
RAW_AGENT = Path(__file__).resolve().with_name("raw_agent.py")
# Far longer than any run here takes; only a bridge that hangs waits so long.
HANG_SECONDS = 60.0
INVALID_PARAMS = -32602
MIB = 1024 * 1024

Step = dict[str, Any]


def raw(message: dict[str, Any]) -> Step:
    """A step sending `message` as one frame."""
    return {"raw": json.dumps(message) + "\n"}


def update(update: dict[str, Any]) -> Step:
    return raw({"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": "raw-session", "update": update}})


def request(method: str, **params: Any) -> Step:
    """A request of the agent; the bridge's answer goes to the record's `answers`."""
    return {"request": {"method": method, "params": {"sessionId": "raw-session", **params}}}


def launch_raw(stack: Stack, workdir: Path, script: Sequence[Step], *options: str,
               env: Mapping[str, str] | None = None,
               wrapper: Sequence[str] = ()) -> tuple[Launched, Path]:
    """Starts the bridge on the raw agent playing `script`; the run and the record's path.
    `wrapper` runs the bridge under another command (`setpriv ... --`)."""
    script_path, record_path = workdir / "raw-script.json", workdir / "raw-record.json"
    script_path.write_text(json.dumps(list(script)))
    agent = [sys.executable, str(RAW_AGENT), str(script_path), str(record_path)]
    launched = launch(stack, workdir, [], "--prompt", PROMPT, *options, env=env,
                      command=agent, wrapper=wrapper)
    return launched, record_path


def run_raw(stack: Stack, workdir: Path, script: Sequence[Step], *options: str,
            env: Mapping[str, str] | None = None,
            wrapper: Sequence[str] = ()) -> tuple[Finished, dict[str, Any]]:
    """Runs the bridge on the raw agent to its end; the run and the agent's record."""
    launched, record_path = launch_raw(stack, workdir, script, *options, env=env,
                                       wrapper=wrapper)
    return launched.finish_unhung(HANG_SECONDS), read_record(record_path)


def read_record(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text())
    return record


def agent_text(stack: Stack, finished: Finished) -> list[str]:
    """The agent's chat messages the service recorded for the run."""
    session_id = finished.result()["session_id"]
    return [m["content"] for m in stack.api.messages(session_id) if m["author_type"] == "agent"]


def error_of(answer: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The code and data of an error answer."""
    error = answer["error"]
    return int(error["code"]), dict(error.get("data") or {})

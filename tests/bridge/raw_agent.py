"""A hostile ACP agent for the tests of what the bridge withstands: it speaks JSON-RPC over
stdio by hand, so it can send what no SDK would (frames without an end, odd ids, deep nesting).

    python raw_agent.py SCRIPT RECORD

It answers `initialize` and `session/new`; on `session/prompt` it plays SCRIPT (a JSON list):

    {"raw": "text"}                  these bytes as they are (no newline added)
    {"filler": N}                    N bytes of `x` (no newline), written 1 MiB at a time
    {"request": {"method": ..., "params": {...}}}   a request; the answer -> record["answers"]
    {"environ_of_parent": ["NAME"]}  which NAMEs /proc/<parent>/environ holds -> record
    {"parent_peak_rss": true}        the parent's (the bridge's) VmHWM in KiB -> record
    {"hang": SECONDS}                sleep, reading nothing (an agent that ignores the bridge)
    {"stderr": "text"}               these bytes on its stderr, as they are
    {"named_request": {...}, "as": NAME}   a `request` step whose params may say "@NAME" for
                                     a terminal id kept before; keeps its answer's
                                     `terminalId` as NAME if "as" is given
    {"unread": {"method": ..., "params": {...}}, "count": N}
                                     N such requests (params may say "@NAME"), their answers
                                     left unread for now
    {"await_file": PATH}             waits (up to a minute) until PATH exists
    {"parent_rss": true}             the parent's VmRSS in KiB -> record["parent_rss"]
    {"read_unread": true}            reads the answers of the `unread` requests, in the order
                                     they come -> record["unread_answers"], each as its id
                                     and error, or its result with each string as its length

and then answers the prompt `end_turn`, or with the error of a step `{"prompt_error": {...}}`.
A step `{"before_session_new": "text"}` is not played then: its bytes are written when
`session/new` arrives, before its answer; a step `{"session_id": "..."}` is the id that
answer gives (else `raw-session`); with a step `{"initialize_error": {...}}`,
`initialize` is answered with that error. RECORD (JSON) holds its pid and is rewritten after
every step.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

_MIB = 1024 * 1024


class RawAgent:
    def __init__(self, script: list[dict[str, Any]], record: Path) -> None:
        self._script = script
        self._record_path = record
        self._record: dict[str, Any] = {"answers": [], "environ_of_parent": [], "done": [],
                                        "parent_peak_rss": [], "pid": os.getpid()}
        self._record["parent_rss"] = []
        self._record["unread_answers"] = []
        self._next_id = 0
        self._names: dict[str, Any] = {}
        self._unread: set[str] = set()
        self._save()

    def _save(self) -> None:
        partial = self._record_path.with_suffix(".partial")
        partial.write_text(json.dumps(self._record))
        os.replace(partial, self._record_path)

    def _write(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()

    def _send(self, message: dict[str, Any]) -> None:
        self._write(json.dumps(message).encode() + b"\n")

    def _answer(self, request_id: Any, result: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _answer_with(self, key: str, request_id: Any, result: dict[str, Any]) -> None:
        """The error of the script's step `key`, if it has one, else `result`."""
        for step in self._script:
            if key in step:
                self._send({"jsonrpc": "2.0", "id": request_id, "error": step[key]})
                return
        self._answer(request_id, result)

    def serve(self) -> None:
        for line in sys.stdin.buffer:
            message = json.loads(line)
            method = message.get("method")
            if method == "initialize":
                self._answer_with("initialize_error", message["id"], {
                    "protocolVersion": 1, "agentCapabilities": {},
                    "agentInfo": {"name": "raw", "version": "1"}})
            elif method == "session/new":
                for step in self._script:
                    if "before_session_new" in step:
                        self._write(str(step["before_session_new"]).encode())
                own = next((step["session_id"] for step in self._script
                            if "session_id" in step), "raw-session")
                self._answer(message["id"], {"sessionId": own})
            elif method == "session/prompt":
                for index, step in enumerate(self._script):
                    self._play(step)
                    self._record["done"].append(index)
                    self._save()
                self._answer_with("prompt_error", message["id"], {"stopReason": "end_turn"})

    def _play(self, step: dict[str, Any]) -> None:
        if any(key in step for key in ("before_session_new", "session_id",
                                       "initialize_error", "prompt_error")):
            return  # played when session/new, initialize or the prompt's end came
        if "raw" in step:
            self._write(str(step["raw"]).encode())
        elif "filler" in step:
            left = int(step["filler"])
            while left > 0:
                self._write(b"x" * min(left, _MIB))
                left -= _MIB
        elif "request" in step:
            self._record["answers"].append(self._request(step["request"]))
        elif "environ_of_parent" in step:
            self._record["environ_of_parent"] = sorted(set(step["environ_of_parent"])
                                                       & _parent_environ_names())
        elif "parent_peak_rss" in step:
            self._record["parent_peak_rss"].append(_parent_peak_rss_kib())
        elif "hang" in step:
            time.sleep(float(step["hang"]))
        elif "stderr" in step:
            sys.stderr.buffer.write(str(step["stderr"]).encode())
            sys.stderr.buffer.flush()
        else:
            self._play_more(step)

    def _play_more(self, step: dict[str, Any]) -> None:
        if "named_request" in step:
            answer = self._request(self._named(step["named_request"]))
            self._record["answers"].append(answer)
            if "as" in step:
                self._names[f"@{step['as']}"] = answer["result"]["terminalId"]
        elif "unread" in step:
            for _ in range(int(step.get("count", 1))):
                request_id = f"raw-{self._next_id}"
                self._next_id += 1
                self._send({"jsonrpc": "2.0", "id": request_id, **self._named(step["unread"])})
                self._unread.add(request_id)
        elif "await_file" in step:
            deadline = time.monotonic() + 60.0
            while not Path(step["await_file"]).exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        elif "parent_rss" in step:
            self._record["parent_rss"].append(_parent_rss_kib())
        elif "read_unread" in step:
            self._read_unread()

    def _named(self, request: dict[str, Any]) -> dict[str, Any]:
        """`request` with each param "@NAME" replaced by the terminal id kept as NAME."""
        params = {key: self._names.get(value, value) if isinstance(value, str) else value
                  for key, value in request.get("params", {}).items()}
        return {**request, "params": params}

    def _read_unread(self) -> None:
        if not self._unread:
            return
        for line in sys.stdin.buffer:
            message: dict[str, Any] = json.loads(line)
            if message.get("id") not in self._unread or "method" in message:
                continue
            self._unread.discard(message["id"])
            result = message.get("result") or {}
            self._record["unread_answers"].append({
                "id": message["id"], "error": message.get("error"),
                "result": {key: len(value) if isinstance(value, str) else value
                           for key, value in result.items()}})
            if not self._unread:
                return

    def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        request_id = f"raw-{self._next_id}"
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": request_id, **request})
        for line in sys.stdin.buffer:
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message
        return {"eof": True}


def _parent_environ_names() -> set[str]:
    try:
        environ = Path(f"/proc/{os.getppid()}/environ").read_bytes()
    except OSError:
        return set()
    return {entry.split(b"=", 1)[0].decode() for entry in environ.split(b"\0") if entry}


def _parent_peak_rss_kib() -> int:
    for line in Path(f"/proc/{os.getppid()}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _parent_rss_kib() -> int:
    for line in Path(f"/proc/{os.getppid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def main() -> None:
    script = json.loads(Path(sys.argv[1]).read_text())
    RawAgent(script, Path(sys.argv[2])).serve()


if __name__ == "__main__":
    main()

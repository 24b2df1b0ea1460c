"""Notifications whose method the bridge does not serve, from a hostile agent: each of the
first few costs one quoted warning and none a traceback, a flood costs a few lines more, and
a request with an unknown method is still answered "method not found"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bridge.hostile import Step, agent_text, raw, request, run_raw, update
from bridge.provider_scripts import say

from shellexec.bridge.notifications import METHOD_CHARS

from support.stack import Stack

pytestmark = pytest.mark.slow

METHOD_NOT_FOUND = -32601
FLOOD = 150


def _notification(method: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": {"n": 1}}) + "\n"


def test_unserved_notifications_are_ignored_with_few_short_lines_and_no_traceback(
        stack: Stack, tmp_path: Path) -> None:
    forged = "x\nshellexec bridge: published 99 update(s)"
    methods = [forged, "elicitation/complete", "y" * 1000,
               *(f"flood/{n}" for n in range(FLOOD - 3))]
    script: list[Step] = [
        update(say("before ")), {"raw": "".join(_notification(m) for m in methods)},
        raw({"jsonrpc": "2.0", "method": "_vendor/progress", "params": {}}),  # an extension
        request("no/such/method"), update(say("after"))]
    finished, record = run_raw(stack, tmp_path, script)

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    lines = [line for line in finished.stderr.splitlines() if "notification" in line]
    assert len(lines) == 11, "\n".join(lines)
    assert lines[0] == (f"shellexec bridge: agent sent a notification of method {forged!r}, "
                        "which the bridge does not serve: ignored")
    assert lines[1].endswith("method 'elicitation/complete', which the bridge does not "
                             "serve: ignored")
    assert f"method {'y' * METHOD_CHARS!r}, which" in lines[2]
    assert lines[9].endswith("method 'flood/6', which the bridge does not serve: ignored; "
                             "more are only counted")
    assert lines[10] == ("shellexec bridge: agent sent 100 notifications the bridge does not "
                         "serve so far (the latest of method 'flood/96'): ignored")
    [answer] = record["answers"]
    assert answer["error"]["code"] == METHOD_NOT_FOUND
    assert agent_text(stack, finished) == ["before after"]

"""A `tool_call` the bridge made from a permission request (`_meta.shellexec_permission_request`,
ADR 0131): it names the call, its command and directory, never output or an exit code."""

from __future__ import annotations

from typing import Any

from shellexec.normalize import fold, fold_all, new_state, shell_record

Update = dict[str, Any]
MARK = {"shellexec_permission_request": True}


def _text(text: str) -> Update:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _asked(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": "c", "status": "pending",
            "_meta": MARK, **fields}


def _update(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "c", **fields}


def test_a_gemini_call_announced_only_by_its_permission_request_is_a_command() -> None:
    asked = _asked(title="make", kind="execute",
                   content=[_text("[current working directory /r] (Build)")])
    record = shell_record(fold_all([asked, _update(status="completed", content=[])]))
    assert (record.is_shell, record.command, record.work_dir) == (True, "make", "/r")
    assert (record.status, record.result, record.output.stdout) == ("complete", "unknown", None)


def test_the_reason_text_of_a_codex_request_is_not_output() -> None:
    asked = _asked(title="make test", kind="execute", content=[_text("Needs the network")],
                   rawInput={"command": ["/bin/bash", "-lc", "make test"], "cwd": "/p"})
    state = fold(new_state(), asked)
    assert (state.command, state.work_dir, state.stdout, state.status) == (
        "make test", "/p", None, "pending")
    delta = _update(_meta={"terminal_output_delta": {"terminal_id": "c", "data": "ok\n"}})
    assert shell_record(fold(state, delta)).output.stdout == "ok\n"


def test_a_request_states_no_output_or_exit_whatever_it_carries() -> None:
    asked = _asked(title="x", kind="execute", rawInput={"command": "x"},
                   rawOutput={"stdout": "y", "exit_code": 0},
                   content=[_text("Command exited with code 3")])
    record = shell_record(fold(new_state(), asked))
    assert (record.output.stdout, record.output.exit_code) == (None, None)


def test_without_the_mark_the_same_update_is_read_as_usual() -> None:
    plain = {key: value for key, value in _asked(title="x", kind="execute",
                                                 rawInput={"command": "x"},
                                                 content=[_text("hi")]).items()
             if key != "_meta"}
    assert shell_record(fold(new_state(), plain)).output.stdout == "hi"

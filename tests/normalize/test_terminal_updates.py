"""ACP v2 terminal updates folded into the call that names their terminal (ADR 0085)."""

from __future__ import annotations

import base64
from typing import Any

from shellexec.normalize import dump_state, fold, fold_all, load_state, new_state, shell_record
from shellexec.normalize.terminal_updates import terminal_refs

Update = dict[str, Any]
TERMINAL = {"type": "terminal", "terminalId": "term-1"}


def b64(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


def start(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
            "status": "in_progress", "content": [TERMINAL], **fields}


def update(**fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "c", **fields}


def terminal(**fields: Any) -> Update:
    return {"sessionUpdate": "terminal_update", "terminalId": "term-1", **fields}


def chunk(data: bytes | str, terminal_id: str = "term-1") -> Update:
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id,
            "data": b64(data)}


def text_content(text: str) -> list[Any]:
    return [{"type": "content", "content": {"type": "text", "text": text}}]


def test_chunks_append_and_the_exit_status_is_the_record_s() -> None:
    record = shell_record(fold_all([
        start(), terminal(command="make", cwd="/r"), chunk("a\n"), chunk("b\n"),
        terminal(exitStatus={"exitCode": 2, "signal": None}), update(status="completed")]))
    assert (record.command, record.work_dir) == ("make", "/r")
    assert record.output.stdout == "a\nb\n"
    assert (record.output.exit_code, record.status, record.result) == (2, "failed", "failure")


def test_a_snapshot_replaces_the_output_and_null_clears_it() -> None:
    state = fold_all([start(), chunk("old"), terminal(output={"data": b64("new text")})])
    assert shell_record(state).output.stdout == "new text"
    state = fold(state, terminal(output=None))
    assert shell_record(state).output.stdout == ""


def test_a_utf8_sequence_split_between_chunks_is_joined() -> None:
    euro = "€".encode()
    state = fold_all([start(), chunk(b"price " + euro[:1]), chunk(euro[1:2])])
    assert shell_record(state).output.stdout == "price "
    # The held bytes survive a restart of the fold (they are in the stored state).
    restored = load_state(dump_state(state), shell_record(state).output.stdout, None)
    assert shell_record(fold(restored, chunk(euro[2:] + b"!"))).output.stdout == "price €!"


def test_terminal_output_outranks_the_agent_s_report() -> None:
    record = shell_record(fold_all([
        start(), chunk("1\n2\n3\n"),
        update(content=text_content("3\n"), _meta={"terminal_output_delta": "x"}),
        update(status="completed", rawOutput={"stdout": "(tail) 3\n", "stderr": "e",
                                              "exit_code": 0}),
        terminal(exitStatus={"exitCode": 1})]))
    assert (record.output.stdout, record.output.stderr) == ("1\n2\n3\n", None)
    assert (record.output.exit_code, record.status) == (1, "failed")


CODEX_END = update(status="failed", rawOutput={
    "command": ["/bin/bash", "-lc", "make test"], "formatted_output": "1\n2\n3\n4\n",
    "aggregated_output": "1\n2\n3\n4\n", "stdout": "1\n2\n3\n4\n", "stderr": "",
    "exit_code": 2})


def test_codex_s_end_text_outranks_its_own_terminal_in_either_order() -> None:
    """Codex to an ACP v2 client: its capped live deltas arrive as the terminal's chunks, and
    its end event's `formatted_output` is the spec's authoritative output, as in v1."""
    exit_status = terminal(exitStatus={"exitCode": 2, "signal": None})
    codex = start(rawInput={"command": ["/bin/bash", "-lc", "make test"]})
    orders = [
        [codex, chunk("1\n2\n"), CODEX_END, chunk("3\n"), exit_status],
        [codex, CODEX_END, chunk("1\n2\n"), terminal(output={"data": b64("1\n")}),
         exit_status],
    ]
    for updates in orders:
        state = fold_all(updates)
        record = shell_record(state)
        assert (record.output.stdout, record.output.stderr) == ("1\n2\n3\n4\n", None)
        assert (record.output.exit_code, record.status) == (2, "failed")
        # And so after a restart of the fold.
        restored = load_state(dump_state(state), record.output.stdout, None)
        assert shell_record(fold(restored, chunk("5\n"))).output.stdout == "1\n2\n3\n4\n"


def hosted(update: Update) -> Update:
    """`update` as a client hosting the terminal sends it: naming the call (the bridge)."""
    return {**update, "_meta": {"shellexec_tool_call_id": "c"}}


def test_no_end_text_replaces_the_transcript_of_a_terminal_a_client_hosts() -> None:
    """The bridge hosts the terminal so that the process's own transcript outranks what the
    agent says it printed: a Codex-shaped end text, sent after the terminal's updates or
    before them, replaced it (a reviewer's forged `formatted_output`)."""
    codex = start(rawInput={"command": ["/bin/bash", "-lc", "make test"]})
    exit_status = hosted(terminal(exitStatus={"exitCode": 2, "signal": None}))
    orders = [
        [codex, hosted(chunk("REAL\n")), exit_status, CODEX_END],
        [codex, CODEX_END, hosted(terminal(command="make test")), hosted(chunk("REAL\n")),
         exit_status],
    ]
    for updates in orders:
        state = fold_all(updates)
        assert shell_record(state).output.stdout == "REAL\n"
        restored = load_state(dump_state(state), "REAL\n", None)
        assert shell_record(fold(restored, CODEX_END)).output.stdout == "REAL\n"


def test_codex_s_running_text_and_another_agent_s_end_text_do_not_replace_the_transcript(
        ) -> None:
    codex = start(rawInput={"command": ["/bin/bash", "-lc", "make test"]})
    running = update(status="in_progress", rawOutput={"formatted_output": "1\n"})
    assert shell_record(fold_all([codex, chunk("1\n2\n"), running])).output.stdout == "1\n2\n"
    goose = start(rawInput={"command": "make test"})  # not Codex's shape
    state = fold_all([goose, chunk("1\n2\n"), CODEX_END])
    assert shell_record(state).output.stdout == "1\n2\n"


def test_the_agent_s_exit_code_stands_below_the_terminal_s() -> None:
    state = fold_all([start(), chunk("x"), update(status="completed", rawOutput={"exit_code": 0})])
    assert shell_record(state).output.exit_code == 0
    state = fold(state, terminal(exitStatus={"exitCode": 3}))
    state = fold(state, update(rawOutput={"exit_code": 0}))
    assert shell_record(state).output.exit_code == 3


def test_a_signal_fails_a_call_the_agent_reports_completed() -> None:
    state = fold_all([start(), chunk("x"), terminal(exitStatus={"exitCode": None,
                                                                "signal": "SIGKILL"}),
                      update(status="completed", rawOutput={"returncode": 0, "exit_code": 0})])
    record = shell_record(state)
    assert (record.output.exit_code, record.status, record.result) == (None, "failed", "failure")
    restored = load_state(dump_state(state), record.output.stdout, None)
    assert restored.status == "failed"
    cleared = fold(state, terminal(exitStatus=None))
    assert shell_record(cleared).status == "complete"


def test_updates_before_the_call_names_its_terminal_are_held() -> None:
    early = [terminal(command="ls"), chunk("a"), chunk("b")]
    first = {"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
             "status": "in_progress"}
    record = shell_record(fold_all([first, *early, update(content=[TERMINAL]), chunk("c")]))
    assert (record.command, record.output.stdout) == ("ls", "abc")


def test_a_terminal_the_call_never_names_is_not_its_output() -> None:
    record = shell_record(fold_all([start(), chunk("mine"), chunk("other", "term-2")]))
    assert record.output.stdout == "mine"


def test_a_hosting_client_names_the_call_in_meta() -> None:
    hinted = {**chunk("out"), "_meta": {"shellexec_tool_call_id": "c"}}
    first = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "run it"}
    record = shell_record(fold_all([hinted, first]))
    assert (record.is_shell, record.output.stdout) == (True, "out")


def test_malformed_terminal_updates_state_nothing() -> None:
    state = fold_all([start(), chunk("ok")])
    for bad in (
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "term-1", "data": "!!"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "term-1", "data": 7},
        {"sessionUpdate": "terminal_output_chunk", "data": b64("x")},
        terminal(output={"data": "not base64"}, exitStatus={"exitCode": "two"}),
        terminal(exitStatus=[1]),
    ):
        assert shell_record(fold(state, bad)) == shell_record(state)


def test_invalid_bytes_become_replacement_characters() -> None:
    state = fold_all([start(), chunk(b"a\xffb")])
    assert shell_record(state).output.stdout == "a\ufffdb"


def test_an_incomplete_sequence_at_the_exit_becomes_a_replacement_character() -> None:
    """No byte can complete it once the process exited; it is not dropped."""
    state = fold_all([start(), chunk(b"a\xc3")])
    assert shell_record(state).output.stdout == "a"
    exited = fold(state, terminal(exitStatus={"exitCode": 0, "signal": None}))
    assert shell_record(exited).output.stdout == "a\ufffd"
    assert exited.host_pending == b""  # nothing left to complete, in the stored state too
    signalled = fold(state, terminal(exitStatus={"exitCode": None, "signal": "SIGKILL"}))
    assert shell_record(signalled).output.stdout == "a\ufffd"


def test_a_new_state_has_no_terminal() -> None:
    assert "host" not in dump_state(new_state())


def test_a_terminal_that_prints_nothing_owns_the_output_from_its_first_update() -> None:
    # The bridge's `terminal_update{command, cwd}` at create, then only the exit status: the
    # transcript is empty, and the agent's own text (OMP's, here) is not the output.
    hosted = {"_meta": {"shellexec_tool_call_id": "c"}}
    first = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "$ true",
             "kind": "execute", "status": "pending", "rawInput": {"command": "true"}}
    record = shell_record(fold_all([
        first, {**terminal(command="true", cwd="/r"), **hosted},
        {**terminal(exitStatus={"exitCode": 0, "signal": None}), **hosted},
        update(status="completed", content=text_content("(the agent's summary)"),
               rawOutput={"content": [{"type": "text", "text": "(summary)"}], "details": {}})]))
    assert (record.output.stdout, record.output.stderr, record.output.exit_code) == ("", None, 0)
    assert (record.status, record.result, record.work_dir) == ("complete", "success", "/r")


def test_a_call_naming_thousands_of_terminals_names_each_once_in_order() -> None:
    # Each id was once looked up in a list of those before it: the square of their number.
    count = 30_000
    content = [{"type": "terminal", "terminalId": f"t{index % (count // 2)}"}
               for index in range(count)]
    update = {"sessionUpdate": "tool_call", "toolCallId": "c1", "kind": "execute",
              "content": content}
    assert terminal_refs(update) == tuple(f"t{index}" for index in range(count // 2))

"""The agent process: its environment, its stderr, and updates the SDK would not parse."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.harness import Step, Update, assert_recorded, run_bridge
from bridge.provider_scripts import say, steps

from shellexec.client import ShellExecClient

from support.acp import codex_delta, codex_start
from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Look around."
SECRET = "sk-test-7c1f0a2e9d-never-log-me"


def test_environment_is_the_documented_allow_list(stack: Stack, tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET, "AUGMENT_API_TOKEN": SECRET,
           "AWS_SECRET_ACCESS_KEY": "aws-secret", "DATABASE_URL": "postgres://x",
           "MY_TOOL_HOME": "/opt/tool"}
    finished = run_bridge(stack, tmp_path, [{"update": say("ok")}], "--env", "MY_TOOL_HOME",
                          "--env", "NOT_SET_ANYWHERE", "--prompt", PROMPT, "--verbose",
                          env=env, report_env=[*env, "PATH", "HOME"])

    assert finished.code == 0, finished.stderr
    received = finished.record["env"]
    assert received["OPENAI_API_KEY"] == SECRET
    assert received["ANTHROPIC_API_KEY"] == SECRET
    assert received["AUGMENT_API_TOKEN"] == SECRET
    assert received["MY_TOOL_HOME"] == "/opt/tool"
    assert received["AWS_SECRET_ACCESS_KEY"] is None
    assert received["DATABASE_URL"] is None
    assert received["PATH"]
    assert received["HOME"]
    assert "SHELLEXEC_GRPC_ADDRESS" not in finished.record["env_names"]
    assert SECRET not in finished.stderr + finished.stdout
    assert "OPENAI_API_KEY" in finished.stderr  # names are logged, values never
    assert "--env NOT_SET_ANYWHERE: not set" in finished.stderr


def test_agent_stderr_is_drained_so_a_chatty_agent_never_blocks(stack: Stack,
                                                                tmp_path: Path) -> None:
    line = "debug: " + "x" * 120
    script: list[Step] = [{"stderr": line, "repeat": 8000}, {"update": say("still alive")},
              {"stderr": "last words", "repeat": 1}]
    finished = run_bridge(stack, tmp_path, script, "--prompt", PROMPT)

    assert finished.code == 0, finished.stderr[-2000:]
    relayed = [text for text in finished.stderr.splitlines() if text.startswith("[agent] ")]
    assert len(relayed) == 8001
    assert relayed[0] == f"[agent] {line}"
    assert relayed[-1] == "[agent] last words"


def test_update_types_the_sdk_does_not_know_are_forwarded_raw(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    unknown: list[Update] = [
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "aGk="},
        {"sessionUpdate": "some_future_update", "payload": {"x": 1}},
    ]
    # ACP v2's `cancelled` status is not in the SDK's v1 models: parsed, it would be lost.
    updates: list[Update] = [
        codex_start("raw-1", "sleep 100"), codex_delta("raw-1", "zzz\n"), *unknown,
        {"sessionUpdate": "tool_call_update", "toolCallId": "raw-1", "status": "cancelled"}]
    finished = run_bridge(stack, tmp_path, steps(updates), "--agent", "codex",
                          "--prompt", PROMPT)

    assert finished.code == 0, finished.stderr
    assert "published 6 update(s); 0 already stored; 0 refused" in finished.stderr
    assert "Traceback" not in finished.stderr
    session_id = finished.result()["session_id"]
    [tool] = [m for m in client.messages(session_id) if m.type == "tool_execute"]
    assert tool.metadata.status == "cancelled"
    assert_recorded(client, session_id, PROMPT, updates, "codex")


def test_update_the_service_refuses_is_skipped_and_the_rest_recorded(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    updates = [say("before "), {"sessionUpdate": "tool_call"}, say("after")]
    finished = run_bridge(stack, tmp_path, steps(updates), "--prompt", PROMPT)

    assert finished.code == 0, finished.stderr
    assert "service refused update #3 (tool_call)" in finished.stderr
    assert "published 3 update(s); 0 already stored; 1 refused" in finished.stderr
    messages = client.messages(finished.result()["session_id"])
    assert [(m.author_type, m.content) for m in messages] == [("user", PROMPT),
                                                              ("agent", "before after")]


def test_missing_agent_program_fails_with_exit_1_and_no_result(stack: Stack,
                                                               tmp_path: Path) -> None:
    finished = run_bridge(stack, tmp_path, [], "--prompt", PROMPT,
                          command=[str(tmp_path / "no-such-agent")])
    assert finished.code == 1
    assert finished.stdout == ""
    assert "cannot run" in finished.stderr

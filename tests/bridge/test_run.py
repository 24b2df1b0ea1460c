"""The bridge end to end, per provider: the real `shellexec bridge`, the fake agent replaying
provider-shaped sequences, the real service; what is stored must be what the normalization
engine yields for the same updates."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from bridge.harness import assert_recorded, launch, run_bridge, updates_of
from bridge.provider_scripts import PROVIDERS, fixture_updates, long_stream, say, steps, unfinished

from shellexec.client import ShellExecClient

from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Run the build and tell me what failed."


def _advertised(record: dict[str, object]) -> None:
    initialize = record["initialize"]
    assert isinstance(initialize, dict)
    capabilities = initialize["clientCapabilities"]
    assert capabilities["_meta"] == {"terminal_output": True, "terminal_output_delta": True}
    assert capabilities.get("terminal", False) is False


@pytest.mark.parametrize("provider", PROVIDERS)
def test_provider_session_is_stored_as_normalized(stack: Stack, client: ShellExecClient,
                                                  tmp_path: Path, provider: str) -> None:
    updates = [say("Looking at the build. "), *fixture_updates(provider),
               say("Now the long one. "), *long_stream(provider, f"{provider}-long"),
               say("Done.")]
    finished = run_bridge(stack, tmp_path, [*steps(updates, 20, 0.01), {"stop": "end_turn"}],
                          "--agent", provider, "--prompt", PROMPT)

    assert finished.code == 0, finished.stderr
    result = finished.result()
    assert result["stop_reason"] == "end_turn"
    assert result["url"] == f"{stack.rest_url}/?session={result['session_id']}"
    _advertised(finished.record)
    assert finished.record["session/prompt"]["prompt"] == [{"type": "text", "text": PROMPT}]
    assert client.get_session(result["session_id"]).agent == provider
    assert_recorded(client, result["session_id"], PROMPT, updates, provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_sigint_cancels_the_prompt_and_keeps_the_running_commands_output(
        stack: Stack, client: ShellExecClient, tmp_path: Path, provider: str) -> None:
    updates = [say("Starting. "), *unfinished(provider, f"{provider}-cut")]
    script = [*steps(updates), {"mark": "streaming"}, {"wait_for_cancel": 30}]
    bridge = launch(stack, tmp_path, script, "--agent", provider, "--prompt", PROMPT)
    bridge.wait_for_mark("streaming")
    bridge.process.send_signal(signal.SIGINT)
    finished = bridge.finish()

    assert finished.code == 130, finished.stderr
    assert len(finished.record["session/cancel"]) == 1
    result = finished.result()
    assert result["stop_reason"] == "cancelled"
    assert_recorded(client, result["session_id"], PROMPT, updates, provider)
    [tool] = [m for m in client.messages(result["session_id"]) if m.type == "tool_execute"]
    assert tool.metadata.status == "cancelled"


def test_sigterm_exits_143_after_recording_the_turn(stack: Stack, client: ShellExecClient,
                                                    tmp_path: Path) -> None:
    updates = unfinished("codex", "term-1")
    script = [*steps(updates), {"mark": "streaming"}, {"wait_for_cancel": 30}]
    bridge = launch(stack, tmp_path, script, "--agent", "codex", "--prompt", PROMPT)
    bridge.wait_for_mark("streaming")
    bridge.process.send_signal(signal.SIGTERM)
    finished = bridge.finish()
    assert finished.code == 143, finished.stderr
    assert finished.result()["stop_reason"] == "cancelled"


def test_agent_ignoring_cancel_is_stopped_after_the_grace(stack: Stack, client: ShellExecClient,
                                                          tmp_path: Path) -> None:
    updates = unfinished("codex", "stubborn-1", lines=3)
    script = [*steps(updates), {"mark": "streaming"}, {"sleep": 60}]
    bridge = launch(stack, tmp_path, script, "--agent", "codex", "--cancel-grace", "0.5",
                    "--prompt", PROMPT)
    bridge.wait_for_mark("streaming")
    bridge.process.send_signal(signal.SIGINT)
    finished = bridge.finish(timeout=15)
    assert finished.code == 130, finished.stderr
    assert "did not end its prompt" in finished.stderr
    result = finished.result()
    assert result["stop_reason"] == "cancelled"
    assert_recorded(client, result["session_id"], PROMPT, updates, "codex")


def test_agent_stop_reason_is_recorded(stack: Stack, client: ShellExecClient,
                                       tmp_path: Path) -> None:
    finished = run_bridge(stack, tmp_path, [{"update": say("Too long.")}, {"stop": "max_tokens"}],
                          "--prompt", PROMPT)
    assert finished.code == 0, finished.stderr
    assert finished.result()["stop_reason"] == "max_tokens"


def test_an_agent_that_dies_before_initialize_is_named_with_its_status(
        stack: Stack, tmp_path: Path) -> None:
    # The failed prompt's message said with which status the agent exited; a failed
    # initialize's said only "Connection closed" when the agent closed its output a moment
    # before it exited, as a process ending its threads does.
    finished = run_bridge(stack, tmp_path, [], "--prompt", PROMPT,
                          command=["sh", "-c", "exec 1>&-; sleep 0.2; exit 4"])
    assert finished.code == 1
    assert "agent exited with status 4" in finished.stderr


def test_agent_crash_mid_command_records_the_turn_and_exits_1(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    updates = unfinished("codex", "crash-1", lines=5)
    finished = run_bridge(stack, tmp_path, [*steps(updates), {"exit": 3}],
                          "--agent", "codex", "--prompt", PROMPT)
    assert finished.code == 1
    assert "agent exited with status 3" in finished.stderr
    result = finished.result()
    assert result["stop_reason"] == "agent_error"
    assert_recorded(client, result["session_id"], PROMPT, updates_of(steps(updates)), "codex")

"""The bridge end to end with the other agents' recorded sequences: the session's agent is
derived from the agent program's name, and what is stored is what the normalization engine
yields for the same updates (calls left running are cancelled when the prompt ends)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge.harness import agent_command, assert_recorded, run_bridge
from bridge.provider_scripts import fixture_updates, say, steps

from shellexec.client import ShellExecClient

from support.stack import Stack

pytestmark = pytest.mark.slow

PROMPT = "Run the build and tell me what failed."
# The agent, and a program name its real command has (docs/bridge.md, "Running each agent").
PROGRAMS = {"gemini": "gemini", "qwen": "qwen", "goose": "goose", "kimi": "kimi",
            "vibe": "vibe-acp", "cursor": "cursor-agent", "copilot": "copilot", "grok": "grok"}


@pytest.mark.parametrize("agent", sorted(PROGRAMS))
def test_agent_session_is_stored_as_normalized(stack: Stack, client: ShellExecClient,
                                               tmp_path: Path, agent: str) -> None:
    updates = [say("Looking. "), *fixture_updates(agent), say("Done.")]
    script = [*steps(updates, 20, 0.01), {"stop": "end_turn"}]
    command = agent_command(tmp_path, script, PROGRAMS[agent])
    finished = run_bridge(stack, tmp_path, [], "--prompt", PROMPT, command=command)

    assert finished.code == 0, finished.stderr
    session_id = finished.result()["session_id"]
    assert client.get_session(session_id).agent == agent
    assert_recorded(client, session_id, PROMPT, updates, agent)

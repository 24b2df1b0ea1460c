"""The agent name derived from the agent command."""

from __future__ import annotations

import pytest

from shellexec.bridge.naming import agent_name


@pytest.mark.parametrize(("command", "name"), [
    (["npx", "@agentclientprotocol/claude-agent-acp"], "claude"),
    (["npx", "-y", "@zed-industries/claude-code-acp@0.16.2"], "claude"),
    (["npx", "@zed-industries/codex-acp"], "codex"),
    (["/usr/local/bin/codex-acp", "--config", "x"], "codex"),
    (["opencode", "acp"], "opencode"),
    (["auggie", "--acp"], "auggie"),
    (["omp", "acp"], "omp"),
    (["gemini", "--experimental-acp"], "gemini"),
    (["npx", "@google/gemini-cli", "--experimental-acp"], "gemini"),
    (["qwen", "--acp"], "qwen"),
    (["goose", "acp"], "goose"),
    (["kimi", "acp"], "kimi"),
    (["vibe-acp"], "vibe"),
    (["uvx", "--from", "mistral-vibe", "vibe-acp"], "vibe"),
    (["cursor-agent", "acp"], "cursor"),
    (["copilot", "--acp"], "copilot"),
    (["grok", "acp"], "grok"),
    (["bunx", "--bun", "@oh-my-pi/pi-coding-agent"], "pi-coding-agent"),
    (["env", "FOO=1", "my-agent", "--stdio"], "my-agent"),
    (["python3.11", "-u", "agents/fake_agent.py"], "fake_agent.py"),
    (["composer"], "composer"),
])
def test_agent_name_reads_the_program_behind_launchers(command: list[str], name: str) -> None:
    assert agent_name(command) == name


def test_agent_name_is_bounded() -> None:
    assert len(agent_name(["a" * 200])) == 64

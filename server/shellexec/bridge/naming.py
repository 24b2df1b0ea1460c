"""The agent name the service session gets, derived from the agent command.

The name is shown in the chat and is the normalization hint (`normalize.new_state(agent=...)`),
so `npx -y @agentclientprotocol/claude-agent-acp@0.101.0` should read `claude`, not `npx`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from shellexec.rules import MAX_AGENT_CHARS
from shellexec.vocabulary import AGENT_ALIASES, AGENT_NAMES

# Programs that run another program named by their first non-option argument.
_LAUNCHERS = frozenset({"npx", "bunx", "pnpx", "uvx", "pipx", "node", "bun", "deno", "env",
                        "npm", "pnpm", "yarn", "exec", "dlx", "run"})
_PYTHON = re.compile(r"python[0-9.]*")
_WORD_SPLIT = re.compile(r"[-_.@/]+")


def _package_word(argument: str) -> str:
    """`@scope/pkg@1.2.3` -> `pkg`; `/usr/bin/codex-acp` -> `codex-acp`."""
    if argument.startswith("@") and "/" in argument:
        argument = argument.split("/", 1)[1]
    return PurePath(argument.split("@", 1)[0] or argument).name


def _is_launcher(word: str) -> bool:
    return word in _LAUNCHERS or _PYTHON.fullmatch(word) is not None


def _program(command: Sequence[str]) -> str:
    """The first argument that is neither an option nor a known launcher."""
    for argument in command:
        word = _package_word(argument)
        if argument.startswith("-") or "=" in argument or _is_launcher(word):
            continue
        return word
    return _package_word(command[0]) if command else ""


def agent_name(command: Sequence[str]) -> str:
    """A known agent's canonical name when the program names one, else the program name."""
    program = _program(command)
    alias = AGENT_ALIASES.get(program.lower())
    if alias is not None:
        return alias
    words = {word.lower() for word in _WORD_SPLIT.split(program)}
    for known in AGENT_NAMES:
        if known in words:
            return known
    return (program or "agent")[:MAX_AGENT_CHARS]

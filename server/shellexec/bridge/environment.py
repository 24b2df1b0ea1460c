"""The environment the agent runs with: explicit, documented, and never logged with values.

The agent gets, and only gets:

1. the ACP SDK's `default_environment()` names: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`,
   `USER` (the MCP convention);
2. `RUNTIME_VARIABLES`: locale, temp and XDG directories, proxies and CA bundles, without which
   Node-based agents fail in ways that look unrelated (no network behind a proxy, lost logins);
3. `PROVIDER_VARIABLES`: the credentials and settings of the known agents and model providers;
4. every name given with `--env NAME`.

Each name is copied from the bridge's own environment when it is set there. Anything else (for
example `AWS_SECRET_ACCESS_KEY` or a database URL) stays out unless the user names it: an agent
runs model-written shell commands, so it should see only what it needs. See docs/adr/0032.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from acp.transports import DEFAULT_INHERITED_ENV_VARS

from shellexec.bridge.errors import UsageError
from shellexec.vocabulary import AGENT_AUGGIE, AGENT_CLAUDE, AGENT_CODEX, AGENT_OMP, AGENT_OPENCODE

RUNTIME_VARIABLES: tuple[str, ...] = (
    "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "COLORTERM",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "NPM_CONFIG_REGISTRY",
)

# Per agent, the patterns (fnmatch, case-sensitive) of what it reads. Shared model-provider
# keys are listed under every agent that can use them.
PROVIDER_VARIABLES: dict[str, tuple[str, ...]] = {
    AGENT_CLAUDE: ("ANTHROPIC_*", "CLAUDE_CODE_*", "CLAUDE_CONFIG_DIR"),
    AGENT_CODEX: ("OPENAI_*", "CODEX_*", "AZURE_OPENAI_*"),
    AGENT_OPENCODE: ("OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                     "GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY",
                     "MISTRAL_API_KEY", "XAI_API_KEY", "DEEPSEEK_API_KEY"),
    AGENT_AUGGIE: ("AUGMENT_*",),
    AGENT_OMP: ("OMP_*", "PI_CODING_AGENT_DIR", "ANTHROPIC_*", "OPENAI_*", "GEMINI_API_KEY",
                "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY", "XAI_API_KEY"),
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class AgentEnvironment:
    """The variables handed to the agent (`values`) and the `--env` names that were unset."""

    values: dict[str, str]
    missing: tuple[str, ...]

    def names(self) -> list[str]:
        """The variable names, sorted: safe to log, unlike the values."""
        return sorted(self.values)


def validate_names(names: Iterable[str]) -> tuple[str, ...]:
    """The `--env` names, checked: a value (`NAME=VALUE`) on a command line would leak."""
    checked = tuple(names)
    for name in checked:
        if not _NAME.fullmatch(name):
            raise UsageError(f"--env takes a variable NAME (not NAME=VALUE): {name!r}")
    return checked


def _allowed(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _patterns() -> tuple[str, ...]:
    provider = (p for patterns in PROVIDER_VARIABLES.values() for p in patterns)
    return (*DEFAULT_INHERITED_ENV_VARS, *RUNTIME_VARIABLES, *provider)


def agent_environment(extra: Iterable[str], source: Mapping[str, str]) -> AgentEnvironment:
    """The agent's environment, drawn from `source` (the bridge's own environment)."""
    extra_names = validate_names(extra)
    patterns = (*_patterns(), *extra_names)
    # Shell functions exported by bash look like `() { ...`; the SDK skips them too.
    values = {name: value for name, value in source.items()
              if _allowed(name, patterns) and not value.startswith("()")}
    missing = tuple(name for name in extra_names if name not in source)
    return AgentEnvironment(values=values, missing=missing)

"""The agent's environment: the documented allow-list, `--env` names, never anything else."""

from __future__ import annotations

import pytest

from shellexec.bridge.environment import PROVIDER_VARIABLES, agent_environment, validate_names
from shellexec.bridge.errors import UsageError

SOURCE = {
    "HOME": "/home/dev", "PATH": "/usr/bin", "LANG": "C.UTF-8", "HTTPS_PROXY": "http://proxy",
    "ANTHROPIC_API_KEY": "a", "CLAUDE_CODE_USE_BEDROCK": "1", "OPENAI_API_KEY": "o",
    "CODEX_HOME": "/c", "AUGMENT_SESSION_AUTH": "s", "OPENCODE_CONFIG": "/oc",
    "OMP_HOME": "/omp", "GEMINI_API_KEY": "g",
    "AWS_SECRET_ACCESS_KEY": "no", "GITHUB_TOKEN": "no", "SHELLEXEC_GRPC_ADDRESS": "no",
    "BASH_FUNC_x%%": "() { echo; }", "EXTRA": "yes",
}


def test_known_provider_and_runtime_variables_pass_and_others_do_not() -> None:
    environment = agent_environment([], SOURCE)
    assert environment.names() == sorted([
        "HOME", "PATH", "LANG", "HTTPS_PROXY", "ANTHROPIC_API_KEY", "CLAUDE_CODE_USE_BEDROCK",
        "OPENAI_API_KEY", "CODEX_HOME", "AUGMENT_SESSION_AUTH", "OPENCODE_CONFIG", "OMP_HOME",
        "GEMINI_API_KEY"])
    assert environment.values["OPENAI_API_KEY"] == "o"


def test_env_names_are_added_and_unset_ones_reported() -> None:
    environment = agent_environment(["EXTRA", "GITHUB_TOKEN", "UNSET"], SOURCE)
    assert environment.values["EXTRA"] == "yes"
    assert environment.values["GITHUB_TOKEN"] == "no"
    assert environment.missing == ("UNSET",)


def test_every_known_agent_has_its_credentials_listed() -> None:
    assert set(PROVIDER_VARIABLES) == {"claude", "codex", "opencode", "auggie", "omp"}


@pytest.mark.parametrize("name", ["A=B", "", "1ABC", "A B", "$HOME"])
def test_env_takes_names_only(name: str) -> None:
    with pytest.raises(UsageError):
        validate_names([name])

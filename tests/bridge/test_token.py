"""The bridge against a service with authentication on: it sends the token of `--token` or
`SHELLEXEC_TOKEN`, and a missing or insufficient token is a usage error naming both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge.harness import run_bridge
from bridge.provider_scripts import say, steps

from shellexec.client import ShellExecClient

from support.acp import codex_end, codex_start
from support.stack import Stack, running_stack

pytestmark = pytest.mark.slow

SCRIPT = [*steps([say("Listing. "), codex_start("c1", "ls"), codex_end("c1", "a\n", 0)]),
          {"stop": "end_turn"}]


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("bridge-auth"), SHELLEXEC_AUTH="on") as stack:
        yield stack


@pytest.mark.parametrize("how", ["variable", "option"])
def test_the_bridge_records_with_an_ingest_token(secured: Stack, tmp_path: Path,
                                                 how: str) -> None:
    token = secured.create_token(f"bridge-{how}", "ingest", tasks="build-*")
    passed = (["--token", token], {}) if how == "option" else ([], {"SHELLEXEC_TOKEN": token})
    finished = run_bridge(secured, tmp_path, SCRIPT, "--task-id", f"build-{how}",
                          "--prompt", "ls", *passed[0], env=passed[1])
    assert finished.code == 0, finished.stderr
    reader = secured.create_token(f"reader-{how}", "read")
    with ShellExecClient(secured.grpc_target, token=reader) as client:
        messages = client.messages(finished.result()["session_id"])
    assert [m.metadata.normalized.shell_exec.command for m in messages
            if m.type == "tool_execute"] == ["ls"]


@pytest.mark.parametrize("scopes", [(), ("read",)])
def test_a_missing_or_read_only_token_is_a_usage_error(secured: Stack, tmp_path: Path,
                                                       scopes: tuple[str, ...]) -> None:
    token = ["--token", secured.create_token(f"bridge-read{len(scopes)}", *scopes)] if scopes \
        else []
    finished = run_bridge(secured, tmp_path, SCRIPT, "--prompt", "ls", *token,
                          env={"SHELLEXEC_TOKEN": ""})
    assert finished.code == 2
    # Without a token, nothing was refused but the call itself: the message says none was given.
    assert ("the service refused the token" if scopes
            else "the service requires a token, and none was given") in finished.stderr
    assert "SHELLEXEC_TOKEN" in finished.stderr

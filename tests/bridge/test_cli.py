"""`shellexec bridge` arguments, the JSON result line and exit statuses."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import grpc
import pytest
from bridge.harness import SHELLEXEC, agent_command, run_bridge

from shellexec.bridge import BridgeOptions, BridgeRun
from shellexec.bridge.cli import main, parse
from shellexec.bridge.errors import UsageError
from shellexec.bridge.retry import RetryPolicy
from shellexec.bridge.signals import Signals
from shellexec.client import ShellExecClient

from support.stack import Stack, free_port

AGENT = ["--", "agent-acp"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--prompt", "hi"], "missing `-- AGENT_COMMAND"),
    (["--prompt", "hi", "--"], "missing `-- AGENT_COMMAND"),
    ([*AGENT], "one of the arguments --prompt --prompt-file is required"),
    (["--prompt", "hi", "--prompt-file", "p.txt", *AGENT], "not allowed with argument"),
    (["--prompt", "  ", *AGENT], "the prompt is empty"),
    (["--prompt-file", "/nonexistent/prompt.txt", *AGENT], "cannot read --prompt-file"),
    (["--prompt", "hi", "--env", "OPENAI_API_KEY=sk-x", *AGENT], "not NAME=VALUE"),
    (["--prompt", "hi", "--retry-for", "0", *AGENT], "--retry-for must be positive"),
    (["--prompt", "hi", "--cwd", "/nonexistent/dir", *AGENT], "--cwd is not a directory"),
    (["--prompt", "hi", "--permission", "maybe", *AGENT], "invalid choice: 'maybe'"),
    (["--prompt", "hi", "--task-id", "has space", *AGENT],
     "--task-id must be 1 to 128 letters, digits, '_', '-', '.' or ':'; got 'has space'"),
    (["--prompt", "hi", "--task-id", "", *AGENT], "--task-id must be 1 to 128"),
    (["--prompt", "hi", "--task-id", "t" * 129, *AGENT], "--task-id must be 1 to 128"),
    (["--prompt", "hi", "--agent", "a" * 65, *AGENT], "--agent must be at most 64 characters"),
    (["--prompt", "hi", "--tls-ca", "/nonexistent/ca.pem", *AGENT], "cannot read --tls-ca"),
    (["--prompt", "hi", "--tls-ca", __file__, *AGENT], "holds no PEM certificate"),
    # nan passed `<= 0`: a terminal killed at once, a retry window without end.
    (["--prompt", "hi", "--retry-for", "nan", *AGENT], "--retry-for must be a finite number"),
    (["--prompt", "hi", "--retry-for", "inf", *AGENT], "--retry-for must be a finite number"),
    (["--prompt", "hi", "--cancel-grace", "nan", *AGENT],
     "--cancel-grace must be a finite number"),
    (["--prompt", "hi", "--terminal-timeout", "nan", *AGENT],
     "--terminal-timeout must be a finite number"),
    (["--prompt", "hi", "--terminal-timeout", "1e999", *AGENT],
     "--terminal-timeout must be a finite number, not inf"),
    # gRPC took these: a port modulo 65536, a URL retried as an outage, nothing at all.
    (["--prompt", "hi", "--server", "127.0.0.1:86836", *AGENT],
     "--server must be HOST:PORT, such as 127.0.0.1:50051, [::1]:50051 or "
     "shellexec.example.com:443 (the port must be a number from 1 to 65535); "
     "got '127.0.0.1:86836'"),
    (["--prompt", "hi", "--server", "127.0.0.1:0", *AGENT], "the port must be a number"),
    (["--prompt", "hi", "--server", "http://127.0.0.1:50051", *AGENT],
     "(a URL: give HOST:PORT alone, without a scheme; for TLS add --tls or --tls-ca)"),
    (["--prompt", "hi", "--server", "", *AGENT], "--server must be HOST:PORT"),
    (["--prompt", "hi", "--server", "unix:/run/shellexec.sock", *AGENT],
     "(a gRPC target with a scheme (unix:), which the bridge does not take"),
    (["--prompt", "hi", "--server", "dns:///shellexec.internal:443", *AGENT],
     "(a gRPC target with a scheme (dns:)"),
    (["--prompt", "hi", "--server", "IPv4:127.0.0.1:50051", *AGENT],
     "(a gRPC target with a scheme (IPv4:)"),
    (["--prompt", "hi", "--server", "127.0.0.1", *AGENT], "(no :PORT)"),
    (["--prompt", "hi", "--server", "::1:50051", *AGENT], "an IPv6 address goes in brackets"),
    (["--prompt", "hi", "--server", "[nope]:50051", *AGENT], "no IPv6 address"),
    (["--prompt", "hi", "--server", "300.1.1.1:50051", *AGENT], "the host is no IPv4 address"),
])
def test_usage_errors_exit_2_with_a_message(capsys: pytest.CaptureFixture[str],
                                            argv: list[str], message: str) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


@pytest.mark.parametrize("server", ["127.0.0.1:50051", "[::1]:443", "localhost:8080",
                                    "shellexec.example.com:443", "shellexec_1:50051"])
def test_a_server_of_host_and_port_is_taken(server: str) -> None:
    options, _ = parse(["--prompt", "hi", "--server", server, "--", "agent"])
    assert options.server == server


@pytest.mark.parametrize(("env", "message"), [
    # `serve` refuses it too: set but empty is no address.
    ({"SHELLEXEC_GRPC_ADDRESS": ""},
     "SHELLEXEC_GRPC_ADDRESS is set but empty: unset it for the default 127.0.0.1:50051"),
    ({"SHELLEXEC_GRPC_ADDRESS": "127.0.0.1:70000"},
     "SHELLEXEC_GRPC_ADDRESS must be HOST:PORT"),
])
def test_the_address_from_the_environment_is_checked_and_named(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        env: dict[str, str], message: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["--prompt", "hi", *AGENT]) == 2
    assert message in capsys.readouterr().err


SECRET = "shx_s3cr3t-t0ken"


@pytest.mark.parametrize(("token", "problem"), [
    (f"{SECRET}\r", "ends with a carriage return (read from a file with Windows line endings?)"),
    (f"{SECRET}\n", "ends with a line feed"),
    (f"{SECRET} x", f"holds a space (character {len(SECRET) + 1} of {len(SECRET) + 2})"),
    (f"{SECRET}\u00e9x", "holds a character outside ASCII"),
    (f"{SECRET}\x1bx", "holds a control character"),
    (SECRET * 20, f"is {len(SECRET) * 20} characters long; the service takes at most 256"),
])
@pytest.mark.parametrize("how", ["variable", "option"])
def test_a_token_no_header_can_carry_is_a_usage_error_that_does_not_show_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        token: str, problem: str, how: str) -> None:
    """It went into a header after the agent had started: a traceback, exit 1."""
    given = ["--token", token] if how == "option" else []
    monkeypatch.setenv("SHELLEXEC_TOKEN", token if how == "variable" else "")
    assert main(["--prompt", "hi", *given, *AGENT]) == 2
    err = capsys.readouterr().err
    name = "--token" if how == "option" else "SHELLEXEC_TOKEN"
    assert f"shellexec bridge: error: {name} {problem}" in err
    assert "at most 256 visible ASCII characters" in err
    assert SECRET not in err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "-- AGENT_COMMAND" in text
    assert "exit status" in text


@pytest.mark.parametrize(("env", "url"), [
    ({}, "http://127.0.0.1:8080"),
    # The service's REST port moved: its page is there, and the result line said 8080.
    ({"SHELLEXEC_REST_PORT": "18780"}, "http://127.0.0.1:18780"),
    ({"SHELLEXEC_REST_PORT": "18780", "SHELLEXEC_WEB_URL": "https://chat.example"},
     "https://chat.example"),
    ({"SHELLEXEC_REST_PORT": "x"}, "http://127.0.0.1:8080"),
])
def test_the_page_url_follows_the_rest_port_unless_given(
        monkeypatch: pytest.MonkeyPatch, env: dict[str, str], url: str) -> None:
    for name in ("SHELLEXEC_REST_PORT", "SHELLEXEC_WEB_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    options, _ = parse(["--prompt", "hi", "--", "agent"])
    assert options.web_url == url


@pytest.mark.slow
def test_result_line_defaults_come_from_the_environment(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("Fix the flaky test.\n")
    command = agent_command(tmp_path, [{"stop": "end_turn"}], "codex-acp")
    finished = run_bridge(stack, tmp_path, [], "--prompt-file", str(tmp_path / "prompt.md"),
                          "--task-id", "task-cli-1", command=command, addresses=False,
                          env={"SHELLEXEC_GRPC_ADDRESS": stack.grpc_target,
                               "SHELLEXEC_WEB_URL": "http://chat.example:9000/"})

    assert finished.code == 0, finished.stderr
    result = json.loads(finished.stdout)
    assert sorted(result) == ["session_id", "stop_reason", "turn_id", "url"]
    assert result["url"] == f"http://chat.example:9000/?session={result['session_id']}"
    session = client.get_session(result["session_id"])
    assert (session.task_id, session.agent, session.state) == ("task-cli-1", "codex", "idle")
    record = json.loads((tmp_path / "codex-acp.record.json").read_text())
    assert record["session/new"]["cwd"] == str(tmp_path)
    assert record["session/prompt"]["prompt"][0]["text"] == "Fix the flaky test.\n"
    [message] = client.messages(result["session_id"])
    assert (message.author_type, message.content) == ("user", "Fix the flaky test.\n")


@pytest.mark.slow
def test_a_task_id_the_service_would_refuse_stops_the_bridge_before_the_agent_starts(
        tmp_path: Path) -> None:
    command = agent_command(tmp_path, [{"stop": "end_turn"}], "codex-acp")
    finished = subprocess.run(
        [str(SHELLEXEC), "bridge", "--server", f"127.0.0.1:{free_port()}", "--retry-for", "1",
         "--cwd", str(tmp_path), "--task-id", "ticket 142", "--prompt", "hi", "--", *command],
        capture_output=True, text=True, timeout=60, check=False)

    assert finished.returncode == 2, finished.stderr
    assert "--task-id must be 1 to 128 letters" in finished.stderr
    assert finished.stdout == ""
    assert not (tmp_path / "codex-acp.record.json").exists()  # the agent never ran


@pytest.mark.slow
def test_a_task_id_the_service_refuses_is_a_usage_error_not_a_retry(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    """The service is the last word on its rules: its refusal of an option the bridge passed
    unchecked (here by building the options without the command line) is a usage error."""
    command = agent_command(tmp_path, [{"stop": "end_turn"}], "codex-acp")
    options = BridgeOptions(command=tuple(command), prompt="hi", server=stack.grpc_target,
                            task_id="ticket 142", cwd=tmp_path, agent="codex",
                            retry=RetryPolicy(window=30))

    async def run() -> None:
        await BridgeRun(options, Signals()).execute()

    with pytest.raises(UsageError) as raised:
        asyncio.run(run())

    assert raised.value.exit_code == 2
    assert str(raised.value).startswith("the service refused --task-id: must be 1 to 128")
    with pytest.raises(grpc.RpcError) as missing:
        client.boot_state("ticket 142")
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND

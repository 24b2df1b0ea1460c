"""`python -m shellexec.demo`: the scripted session renders every kind of row, and the command
uses a running service, starts and stops one of its own, or refuses a broken front door."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage

from shellexec.demo import cli, rest
from shellexec.demo.player import Player
from shellexec.demo.script import LONG_COMMAND, demo_script

from support.rest import unique
from support.stack import Stack, free_port


def demo_env(monkeypatch: pytest.MonkeyPatch, rest_port: int, *, grpc_port: int | None = None,
             database: Path | None = None) -> None:
    monkeypatch.setenv("SHELLEXEC_REST_PORT", str(rest_port))
    monkeypatch.setenv("SHELLEXEC_REST_HOST", "127.0.0.1")
    if grpc_port is not None:
        monkeypatch.setenv("SHELLEXEC_GRPC_ADDRESS", f"127.0.0.1:{grpc_port}")
    if database is not None:
        monkeypatch.setenv("SHELLEXEC_DATABASE_URL", f"sqlite:///{database}")


@pytest.mark.browser
@pytest.mark.slow
def test_demo_session_renders_every_kind_of_row(
        stack: Stack, chat: ChatPage, viewport: str) -> None:
    player = Player(stack.api, pace=0)
    session_id = player.create(unique("demo"), "demo")
    player.play(session_id, demo_script())
    chat.open(f"{stack.rest_url}/?session={session_id}")

    def row(command: str) -> str:
        found = chat.page.locator("[data-testid=shell-row]").filter(
            has=chat.page.get_by_test_id("shell-command").get_by_text(command, exact=True))
        expect(found).to_have_count(1)
        return str(found.get_attribute("data-message-id"))

    expected = {  # command -> (data-result, data-exit-code, disclosure offered)
        "git status": ("success", "0", True),
        "git log --oneline -3": ("neutral", None, True),  # OMP: no exit code on success
        LONG_COMMAND: ("success", "0", True),
        "pytest tests/integration -x -q": ("failure", "2", True),
        'grep -rn "utcnow\\|timezone.utc" src/': ("success", "0", True),
        "ruff check --select DTZ src/": ("failure", "1", True),  # OpenCode `completed` + 1
        "git apply --index /tmp/store-timezone.patch": ("success", "0", False),
        "python -m pytest tests/integration -q": ("success", "0", True),
        "cat build/logs/nightly-integration.log": ("success", "0", True),
        "npm ci --prefix web": ("success", "0", True),
        "npm run dev --prefix web": ("neutral", None, True),  # cancelled with the turn
    }
    ids = {command: row(command) for command in expected}
    for command, (result, exit_code, offered) in expected.items():
        shell = chat.shell_row(ids[command])
        expect(shell, command).to_have_attribute("data-result", result)
        assert shell.get_attribute("data-exit-code") == exit_code, command
        expect(chat.toggle(ids[command]), command).to_have_count(1 if offered else 0)
    expect(chat.shell_row(ids["npm run dev --prefix web"])).to_have_attribute(
        "data-status", "cancelled")
    chat.assert_no_horizontal_overflow()
    chat.pump(500)
    assert chat.shell_requests() == []

    log = chat.expand(ids["cat build/logs/nightly-integration.log"])
    expect(log.get_by_test_id("shell-output-truncated")).to_be_visible()
    expect(log.get_by_test_id("shell-output-stdout")).to_contain_text("finished: 0 errors")
    omp = chat.expand(ids["git log --oneline -3"])
    stdout = omp.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text("4f2a9c1 orders")
    assert (stdout.text_content() or "").startswith("4f2a9c1"), "the `$ cmd` echo is not output"
    expect(omp.get_by_test_id("shell-exit")).to_have_text("Exit code unavailable")
    # Coloured test output in colour, the progress bar in its final state, Markdown replies.
    tests = chat.expand(ids["pytest tests/integration -x -q"])
    failed = tests.locator("span.ansi-fg-1", has_text="FAILED")
    expect(failed.first).to_be_visible()
    assert "\x1b" not in (tests.get_by_test_id("shell-output-stdout").text_content() or "")
    install = chat.expand(ids["npm ci --prefix web"])
    expect(install.get_by_test_id("shell-output-stdout")).to_have_text(
        "Installing [##############################] 100%\nadded 312 packages in 3s\n")
    summary = chat.page.locator("[data-testid=chat-text][data-format=markdown]").last
    expect(summary.locator("table td")).to_have_count(6)
    expect(summary.locator("a")).to_have_attribute("rel", "noopener noreferrer")
    assert len(chat.shell_requests()) == 4
    chat.assert_no_horizontal_overflow()
    chat.screenshot("demo")


def test_demo_command_plays_into_a_running_service(
        stack: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    demo_env(monkeypatch, stack.rest_port)
    task = unique("demo")
    assert cli.main(["--pace", "0", "--exit", "--task", task]) == 0
    printed = capsys.readouterr().out
    assert "Using the service that is already running." in printed
    assert f"{stack.rest_url}/?session=ses_" in printed
    boot = stack.api.call("GET", f"/api/v1/tasks/{task}/boot-state")["initial_state"]
    assert f"{stack.rest_url}/?session={boot['session']['id']}" in printed
    shells = [m for m in boot["messages"] if m["type"] == "tool_execute"]
    assert len(shells) == 11


@pytest.mark.slow
def test_demo_command_starts_and_stops_its_own_service(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    rest_port = free_port()
    demo_env(monkeypatch, rest_port, grpc_port=free_port(),
             database=tmp_path / "demo.db")
    monkeypatch.chdir(tmp_path)  # `shellexec up` and the demo keep their files in ./.run
    assert rest.probe(f"http://127.0.0.1:{rest_port}") is None
    assert cli.main(["--pace", "0", "--exit"]) == 0
    printed = capsys.readouterr().out
    assert "Started `shellexec up`" in printed
    assert "Stopped." in printed
    assert rest.probe(f"http://127.0.0.1:{rest_port}") is None  # stopped again
    assert "shellexec stopped" in (tmp_path / ".run" / "demo-service.log").read_text()


def test_demo_command_refuses_a_front_door_without_the_api(
        own_stack: Stack, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    own_stack.kill_server()  # Envoy answers 503: something is there, but not the API
    demo_env(monkeypatch, own_stack.rest_port)
    assert cli.main(["--pace", "0", "--exit"]) == 1
    assert "answers HTTP 503" in capsys.readouterr().err


def test_demo_command_against_a_service_with_authentication_names_the_token_it_reads(
        secured: Stack, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    demo_env(monkeypatch, secured.rest_port)
    monkeypatch.delenv("SHELLEXEC_TOKEN", raising=False)
    assert cli.main(["--pace", "0", "--exit"]) == 1
    assert "set SHELLEXEC_TOKEN to a token with the ingest scope" in capsys.readouterr().err

    monkeypatch.setenv("SHELLEXEC_TOKEN", secured.create_token("demo-ingest", "ingest"))
    assert cli.main(["--pace", "0", "--exit", "--task", unique("demo-auth")]) == 0


def test_demo_module_runs_as_a_command() -> None:
    done = subprocess.run([sys.executable, "-m", "shellexec.demo", "--help"], check=True,
                          capture_output=True, text=True, timeout=60)
    assert "--pace" in done.stdout
    assert "Ctrl-C" in done.stdout

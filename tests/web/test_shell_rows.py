"""A shell command row before anyone opens it: the full command, the working directory, the
status, and an output disclosure only when output is retained (issue 4 "The page"; spec
scenarios "a persisted shell message with a long command" and "has_output: false")."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.chat import (
    ChatPage,
    codex_delta,
    generic_end,
    generic_start,
    opencode_end,
    opencode_pending,
    opencode_start,
)

from support.acp import agent_text, codex_end, codex_start, load_fixture
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# A real-looking command line far wider than either viewport, with a path token that has no
# break opportunity at all: it must wrap anywhere and stay complete.
LONG_COMMAND = (
    'docker run --rm --network host -v "$PWD":/workspace -w /workspace '
    "-e PYTHONDONTWRITEBYTECODE=1 -e PIP_DISABLE_PIP_VERSION_CHECK=1 "
    "ghcr.io/example-org/ci-images/python-3.11-bookworm-node-20-chromium:2026.11.29 "
    "bash -lc 'python -m pip install --quiet -e .[dev] && python -m pytest "
    "tests/integration/test_shell_output_streaming_through_the_envoy_front_door.py "
    "--maxfail=1 -q --junitxml=/workspace/test-artifacts/junit/"
    "integration-shell-output-streaming-through-envoy-results.xml'"
)


def test_long_command_wraps_completely_with_disclosure_collapsed(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [
        codex_start(call, LONG_COMMAND, work_dir="/home/dev/proj"),
        codex_end(call, "1 passed in 0.42s\n", 0),
    ])

    chat.open(f"{stack.rest_url}/?session={session['id']}")
    row = chat.shell_row(message_id)
    command = row.get_by_test_id("shell-command")
    assert command.text_content() == LONG_COMMAND  # complete, never shortened
    expect(row).to_have_attribute("data-expanded", "false")
    expect(chat.toggle(message_id)).to_have_attribute("aria-expanded", "false")
    expect(chat.body(message_id)).to_have_count(0)

    # It wraps visibly: several lines tall, inside the viewport, nothing scrolls sideways.
    line_height = float(command.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)"
                                         " || parseFloat(getComputedStyle(el).fontSize) * 1.4"))
    box = chat.box(command)
    width = chat.page.evaluate("window.innerWidth")
    assert box["height"] >= 2.5 * line_height, (box, line_height)
    assert box["x"] >= 0, box
    assert box["x"] + box["width"] <= width, (box, width)
    assert command.evaluate("el => el.scrollWidth <= el.clientWidth")
    chat.assert_no_horizontal_overflow()
    chat.screenshot("long-command")

    chat.pump(1200)  # nothing fetches output behind the reader's back
    assert chat.shell_requests() == []


# One grapheme cluster no line break can split: a letter and 200 combining marks, which a
# monospace font draws side by side, some 2,000 px wide. The page draws 16 of them and counts
# the rest in a marker (web/combining-marks.js).
CLUSTER = "Z" + "\u0336" * 200
CLUSTER_DRAWN = "Z" + "\u0336" * 16 + "⟨+184 combining marks⟩"


def test_a_command_no_line_break_can_split_stays_inside_its_card(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    """docs/web.md: nothing is wider than the viewport, at 390 px either. Such a command, work
    directory or inline code in a reply ran out of its card, under the status badge, and made
    the page wider than a phone's screen."""
    session = api.new_session("codex")
    api.start_turn(session["id"])
    api.publish(session["id"], agent_text(f"Running `{CLUSTER}` in `/tmp/{CLUSTER}`."))
    call = unique("call")
    message_id = api.play(session["id"], [
        codex_start(call, f"echo {CLUSTER}", work_dir=f"/tmp/{CLUSTER}"),
        codex_end(call, "ok\n", 1),
    ])
    chat.open(f"{stack.rest_url}/?session={session['id']}")
    row = chat.shell_row(message_id)
    assert row.get_by_test_id("shell-command").text_content() == f"echo {CLUSTER_DRAWN}"

    chat.assert_no_horizontal_overflow()
    card = chat.box(row.locator(".shell"))
    badge = chat.box(row.get_by_test_id("shell-status"))
    for part in ("shell-command", "shell-workdir"):
        box = chat.box(row.get_by_test_id(part))
        assert box["x"] + box["width"] <= card["x"] + card["width"], (part, box, card)
        # What shows of it ends at its box: the rest is clipped, not drawn over the badge.
        shown = row.get_by_test_id(part).evaluate(
            "el => getComputedStyle(el).overflowX === 'clip' ? el.getBoundingClientRect().right"
            " : el.getBoundingClientRect().left + el.scrollWidth")
        assert shown <= card["x"] + card["width"], (part, shown, card)
        if part == "shell-workdir":
            assert shown <= badge["x"] or box["y"] + box["height"] <= badge["y"], (shown, badge)
    chat.screenshot("unbreakable-command")


def test_no_retained_output_shows_command_workdir_and_status_without_disclosure(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [
        codex_start(call, "mkdir -p build/reports", work_dir="/home/dev/proj"),
        codex_end(call, "", 0),
    ])
    summary = api.messages(session["id"])[0]["metadata"]["normalized"]["shell_exec"]["output"]
    assert summary == {"exit_code": 0, "truncated": False, "has_output": False,
                       "stdout_bytes": 0, "stderr_bytes": 0}

    chat.open(f"{stack.rest_url}/?session={session['id']}")
    row = chat.shell_row(message_id)
    expect(row.get_by_test_id("shell-command")).to_have_text("mkdir -p build/reports")
    expect(row.get_by_test_id("shell-workdir")).to_have_text("/home/dev/proj")
    expect(row.get_by_test_id("shell-status")).to_be_visible()
    expect(row).to_have_attribute("data-result", "success")
    expect(row).to_have_attribute("data-has-output", "false")
    expect(chat.toggle(message_id)).to_have_count(0)
    # No output control of any kind: the only button copies the command.
    expect(row.get_by_role("button")).to_have_count(1)
    # Named with its command, so a screen reader tells one row's button from another's.
    expect(row.get_by_role("button")).to_have_accessible_name(
        "Copy command: mkdir -p build/reports")

    # Clicking or tapping anywhere on the row cannot start a request.
    chat.press(row)
    chat.press(row.get_by_test_id("shell-command"))
    chat.press(row.get_by_test_id("shell-status"))
    chat.pump(1200)
    expect(chat.body(message_id)).to_have_count(0)
    assert chat.shell_requests() == []
    chat.assert_no_horizontal_overflow()
    chat.screenshot("no-output")


def test_status_rendering_success_failure_neutral_running(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    """Known exit 0 is success; a known nonzero exit is failure (OpenCode `completed` + 7
    included); ACP failed without exit is failure; unknown exit and cancelled without exit are
    neutral; a running command is running, even when its process already exited 1 (the row
    shows the server's result, ADR 0009: the page does not classify)."""
    session = api.new_session("mixed")
    turn = api.start_turn(session["id"])
    sid = session["id"]

    ids: dict[str, str] = {}
    ids["success"] = api.play(sid, load_fixture("auggie-success"))
    ids["failure_exit"] = api.play(sid, load_fixture("codex-rust-terminal-failure"))
    call = unique("call")
    ids["opencode_7"] = api.play(sid, [
        opencode_pending(call),
        opencode_start(call, "npm run lint"),
        opencode_end(call, "npm run lint", "src/app.ts:3:7 error no-unused-vars\n", 7),
    ])
    call = unique("call")
    ids["failed_no_exit"] = api.play(sid, [
        generic_start(call, "./scripts/deploy.sh staging"),
        generic_end(call, "failed", "deploy: permission denied"),
    ])
    ids["unknown_exit"] = api.play(sid, load_fixture("claude-plain-success"))
    call = unique("call")
    ids["cancelled"] = api.play(sid, [
        generic_start(call, "npm run dev"),
        codex_delta(call, "> dev\n> vite\n\n  VITE ready in 412 ms\n"),
    ])
    # The turn ends while it is running: it becomes cancelled, keeping its output.
    api.complete_turn(sid, turn, "cancelled")
    api.start_turn(sid)
    call = unique("call")
    ids["running"] = api.play(sid, [generic_start(call, "tail -f /var/log/app.log")])
    call = unique("call")
    ids["exited_running"] = api.play(sid, [
        codex_start(call, "make watch"),
        {"sessionUpdate": "tool_call_update", "toolCallId": call,
         "_meta": {"terminal_exit": {"terminal_id": call, "exit_code": 1, "signal": None}}},
    ])

    chat.open(f"{stack.rest_url}/?session={sid}")
    expected = {
        "success": ("complete", "success", "0", "Exit code 0"),
        "failure_exit": ("failed", "failure", "2", "Exit code 2"),
        "opencode_7": (None, "failure", "7", "Exit code 7"),
        "failed_no_exit": ("failed", "failure", None, "Exit code unavailable"),
        "unknown_exit": ("complete", "neutral", None, "Exit code unavailable"),
        "cancelled": ("cancelled", "neutral", None, "Exit code unavailable"),
        "running": ("running", "running", None, None),
        "exited_running": ("running", "running", "1", None),
    }
    for name, (status, result, exit_code, exit_text) in expected.items():
        row = chat.shell_row(ids[name])
        expect(row, name).to_have_attribute("data-result", result)
        expect(row.get_by_test_id("shell-status"), name).to_have_attribute("data-result", result)
        if status is not None:
            expect(row, name).to_have_attribute("data-status", status)
        if exit_code is None:
            assert row.get_attribute("data-exit-code") is None, name
        else:
            expect(row, name).to_have_attribute("data-exit-code", exit_code)
        if exit_text is None:
            continue
        body = chat.expand(ids[name])
        expect(body, name).to_have_attribute("data-poll-state", "done")
        exit_line = body.get_by_test_id("shell-exit")
        expect(exit_line, name).to_have_text(exit_text)
        if exit_code is None:
            assert exit_line.get_attribute("data-exit-code") is None, name
        expect(body.get_by_test_id("shell-output-stdout"), name).to_be_visible()

    expect(chat.shell_row(ids["exited_running"]).get_by_test_id("shell-status")).to_have_text(
        "Running")
    # Unknown is drawn neutral, never with a success or failure look.
    for name in ("unknown_exit", "cancelled"):
        badge = chat.shell_row(ids[name]).get_by_test_id("shell-status")
        assert "badge--neutral" in (badge.get_attribute("class") or ""), name
    # The cancelled command kept its transcript.
    cancelled = chat.body(ids["cancelled"]).get_by_test_id("shell-output-stdout")
    expect(cancelled).to_contain_text("VITE ready in 412 ms")
    chat.assert_no_horizontal_overflow()
    chat.screenshot("statuses")

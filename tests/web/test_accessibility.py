"""Accessibility in Chromium (issue 14 "Accessibility and checks"): axe-core (pinned, installed
by `make axe` into .tools) finds no serious or critical violation on the chat and on the index,
at desktop and 390 px mobile, in the light and dark schemes; every disclosure and button is
reachable and operable by keyboard, with a visible focus ring and aria-expanded/aria-controls
kept."""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest
from playwright.sync_api import expect
from web.chat import ROOT, ChatPage, user_text

from support.acp import agent_text, codex_end, codex_start
from support.rest import Api
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

AXE = ROOT / ".tools" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")


def audit(chat: ChatPage) -> list[dict[str, Any]]:
    """The serious and critical violations axe finds on the page as it is now."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: `make axe` installs it")
    # Evaluated over the DevTools protocol, which the page's CSP does not govern: the page
    # itself still runs under its strict policy.
    chat.page.evaluate(AXE.read_text(encoding="utf-8") + "\n;undefined")
    result: dict[str, Any] = chat.page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "targets": [node["target"] for node in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in BLOCKING]


def audit_rules(chat: ChatPage, rules: list[str]) -> list[dict[str, Any]]:
    """The violations of `rules` (axe rule ids), whatever their impact, on the page as it is."""
    chat.page.evaluate(AXE.read_text(encoding="utf-8") + "\n;undefined")
    result: dict[str, Any] = chat.page.evaluate(
        "rules => axe.run(document, {runOnly: {type: 'rule', values: rules},"
        " resultTypes: ['violations']})", rules)
    return [{"id": v["id"], "targets": [node["target"] for node in v["nodes"]][:5]}
            for v in result["violations"]]


# Moderate in axe's terms, so `audit` lets them pass: a page without a main heading, and two
# output regions of the same name, which a screen reader's list of regions cannot tell apart.
NAMING_RULES = ["page-has-heading-one", "landmark-unique"]


def completed_read(call_id: str, title: str) -> dict[str, Any]:
    """A non-shell tool call, completed: its row shows a success badge."""
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "read",
            "title": title, "status": "completed"}


def rich_session(api: Api) -> tuple[str, str]:
    """A session with a failing command (its message id is returned), a successful one and a
    completed tool call, so every badge colour is audited."""
    session = api.new_session("claude")
    sid = session["id"]
    turn = api.start_turn(sid)
    api.publish(sid, user_text("run the tests"))
    api.publish(sid, agent_text("Running **the tests** with `pytest`, see [docs](https://example.com)."
                                "\n\n| test | result |\n|---|---|\n| a | ok |\n\n```\ncode\n```"))
    api.publish(sid, completed_read("r", "Read pyproject.toml"))
    api.play(sid, [codex_start("ok", "pip install -e ."), codex_end("ok", "Installed\n", 0)])
    coloured = "\x1b[32m2 passed\x1b[0m \x1b[31m1 failed\x1b[0m\n"
    message_id = api.play(sid, [codex_start("t", "pytest --color=yes"),
                                codex_end("t", coloured, 1)])
    api.complete_turn(sid, turn, "end_turn")
    api.start_turn(sid)
    return sid, message_id


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_chat_has_no_serious_violations(stack: Stack, api: Api, chat: ChatPage,
                                            viewport: str, scheme: Literal["light", "dark"]
                                            ) -> None:
    chat.page.emulate_media(color_scheme=scheme)
    sid, message_id = rich_session(api)
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    expect(chat.page.locator("[data-testid=shell-status].badge--success")).to_have_count(1)
    expect(chat.page.locator("[data-testid=tool-call-status].badge--success")).to_have_count(1)
    assert audit(chat) == []
    expect(chat.expand(message_id)).to_have_attribute("data-state", "ready")
    succeeded = chat.page.locator("[data-testid=shell-row][data-result=success]")
    expect(chat.expand(str(succeeded.get_attribute("data-message-id")))).to_have_attribute(
        "data-state", "ready")
    assert audit(chat) == []  # the open disclosures and the coloured output too
    assert audit_rules(chat, NAMING_RULES) == []
    # Each row's controls and output say which command they are of.
    expect(chat.toggle(message_id)).to_have_accessible_name(
        re.compile(r"^Hide output of pytest --color=yes\b"))
    expect(chat.body(message_id)).to_have_accessible_name("Output of pytest --color=yes")
    expect(chat.shell_row(message_id).get_by_test_id("shell-output-copy")).to_have_accessible_name(
        "Copy output of pytest --color=yes")
    chat.screenshot(f"a11y-chat-{scheme}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_row_shown_as_plain_text_has_no_serious_violations(
        stack: Stack, api: Api, chat: ChatPage, viewport: str,
        scheme: Literal["light", "dark"]) -> None:
    chat.page.emulate_media(color_scheme=scheme)
    sid, _ = rich_session(api)
    undrawn = api.publish(sid, agent_text("This reply **could not** be drawn."))["message"]["id"]
    chat.fail_to_draw(undrawn)
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    expect(chat.page.locator("[data-undrawn=true]")).to_have_attribute("data-message-id", undrawn)
    assert audit(chat) == []
    chat.screenshot(f"a11y-undrawn-{scheme}")
    chat.expect_undrawn_logged()


def test_the_index_has_no_serious_violations(stack: Stack, api: Api, chat: ChatPage,
                                             viewport: str) -> None:
    rich_session(api)
    chat.page.goto(f"{stack.rest_url}/")
    expect(chat.page.get_by_test_id("session-index")).to_have_attribute("data-state", "ready")
    assert audit(chat) == []


def test_a_command_that_finishes_is_announced_politely(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # Its badge changed colour and words, which a screen reader does not say.
    sid, _ = rich_session(api)  # commands that finished before the page opened
    api.publish(sid, codex_start("m", "make all"))
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    said = chat.page.get_by_test_id("command-finished")
    expect(said).to_have_attribute("role", "status")
    expect(said).to_have_text("")  # nothing is said of what was loaded
    api.publish(sid, codex_end("m", "error\n", 2))
    expect(said).to_have_text("Finished: make all, Failed · exit 2")


def focus_ring(chat: ChatPage) -> dict[str, str]:
    return dict(chat.page.evaluate("""() => { const el = document.activeElement;
      const s = getComputedStyle(el);
      return {testid: el.dataset.testid || '', style: s.outlineStyle, width: s.outlineWidth,
              row: el.closest('[data-message-id]')?.dataset.messageId || ''}; }"""))


def test_every_control_is_reachable_and_operable_by_keyboard(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    sid, message_id = rich_session(api)
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    toggle = chat.toggle(message_id)
    reached: list[str] = []
    for _ in range(40):
        chat.page.keyboard.press("Tab")
        ring = focus_ring(chat)
        reached.append(ring["testid"])
        if ring["testid"]:
            assert ring["style"] != "none", ring  # a visible ring
            assert ring["width"] != "0px", ring
        if ring["testid"] == "shell-output-toggle" and ring["row"] == message_id:
            break  # the failing command's (the successful one's comes first)
    assert "shell-command-copy" in reached
    assert reached[-1] == "shell-output-toggle"
    assert focus_ring(chat)["row"] == message_id

    body_id = toggle.get_attribute("aria-controls")
    chat.page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    body = chat.body(message_id)
    expect(body).to_have_attribute("id", str(body_id))
    expect(body).to_have_attribute("data-state", "ready")
    for name in ("shell-output-copy", "shell-output-download", "shell-output-stdout"):
        chat.page.keyboard.press("Tab")
        assert focus_ring(chat)["testid"] == name
        assert focus_ring(chat)["style"] != "none"
    chat.page.keyboard.press("Shift+Tab")
    chat.page.keyboard.press("Shift+Tab")
    chat.page.keyboard.press("Shift+Tab")
    assert focus_ring(chat)["testid"] == "shell-output-toggle"
    chat.page.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(body).to_have_count(0)

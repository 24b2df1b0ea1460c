"""Accessibility in Chromium (issue 14 "Accessibility and checks"): axe-core (pinned, installed
by `make axe` into .tools) finds no serious or critical violation on the chat and on the index,
at desktop and 390 px mobile, in the light and dark schemes; every disclosure and button is
reachable and operable by keyboard, with a visible focus ring and aria-expanded/aria-controls
kept."""

from __future__ import annotations

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


def rich_session(api: Api) -> tuple[str, str]:
    session = api.new_session("claude")
    sid = session["id"]
    turn = api.start_turn(sid)
    api.publish(sid, user_text("run the tests"))
    api.publish(sid, agent_text("Running **the tests** with `pytest`, see [docs](https://example.com)."
                                "\n\n| test | result |\n|---|---|\n| a | ok |\n\n```\ncode\n```"))
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
    assert audit(chat) == []
    expect(chat.expand(message_id)).to_have_attribute("data-state", "ready")
    assert audit(chat) == []  # the open disclosure and the coloured output too
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


def focus_ring(chat: ChatPage) -> dict[str, str]:
    return dict(chat.page.evaluate("""() => { const el = document.activeElement;
      const s = getComputedStyle(el);
      return {testid: el.dataset.testid || '', style: s.outlineStyle, width: s.outlineWidth}; }"""))


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
        if ring["testid"] == "shell-output-toggle":
            break
    assert "shell-command-copy" in reached
    assert reached[-1] == "shell-output-toggle"

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

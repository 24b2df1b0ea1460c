"""Hostile agent replies (deep nesting, openers that never close) in Chromium: the session
opens with every reply drawn, and a hostile reply arriving live is drawn too.

The parser's bounds are unit-tested in web/test/markdown.test.mjs (steps per character, nesting
depth, the work budget); this checks that the page as a whole keeps working. Before ADR 0124 a
few KiB of `>` overflowed the stack and the session failed to open ("Could not load the
session"), live the reply vanished while the feed reconnected past it, and 60 KiB of `_` or
120 KiB of `[` kept the page's only thread busy for minutes."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage, user_text

from support.acp import agent_text
from support.rest import Api
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE_REPLIES = [
    ">" * 6000 + " deep",  # one nesting level per character
    "- " * 6000 + "deep",
    "a _" * 20_000,  # 60 KB of `_` openers
    "[" * 120_000,  # 120 KB of unclosed brackets
]
# What a reply shows: a hostile one ends in its last characters, drawn as text.
SHOWN: list[str | re.Pattern[str]] = [
    "before the hostile replies", re.compile(r"deep$"), re.compile(r"deep$"), re.compile(r"a _$"),
    re.compile(r"\[$"), "after the hostile replies"]
# Waits, not measurements: the page draws all of this in well under a second; a page that
# freezes fails here instead of hanging the suite.
DRAWN_MS = 30_000


def test_hostile_replies_are_drawn_and_the_session_keeps_working(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("claude")
    api.start_turn(session["id"])
    api.publish(session["id"], agent_text("before the hostile replies"))
    for reply in HOSTILE_REPLIES:
        # A prompt between replies keeps them separate messages (chunks in a row are joined).
        api.publish(session["id"], user_text("go on"))
        api.publish(session["id"], agent_text(reply))
    api.publish(session["id"], user_text("and then?"))
    api.publish(session["id"], agent_text("after the hostile replies"))

    chat.page.goto(f"{stack.rest_url}/?session={session['id']}")
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute(
        "data-loaded", "true", timeout=DRAWN_MS)
    expect(chat.page.get_by_test_id("page-error")).to_have_count(0)
    replies = chat.page.locator("[data-testid=chat-message][data-author=agent]")
    texts = replies.get_by_test_id("chat-text")
    expect(texts).to_have_text(SHOWN)
    # Drawn as Markdown, capped: 6000 `>` nest 32 quotes deep, and the rest is text.
    expect(texts.nth(1).locator("blockquote")).to_have_count(32)
    expect(texts.nth(2).locator("ul")).to_have_count(32)
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")

    # Live: the feed draws a hostile reply too, and the ones after it.
    api.publish(session["id"], user_text("once more"))
    api.publish(session["id"], agent_text(HOSTILE_REPLIES[0]))
    api.publish(session["id"], user_text("and after?"))
    api.publish(session["id"], agent_text("after the live hostile reply"))
    expect(texts).to_have_count(8, timeout=DRAWN_MS)
    expect(texts.nth(6)).to_have_text(re.compile(r"deep$"))
    expect(texts.nth(6).locator("blockquote")).to_have_count(32)
    expect(texts.nth(7)).to_have_text("after the live hostile reply")
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")

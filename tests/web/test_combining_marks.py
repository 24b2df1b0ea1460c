"""A character draws at most 16 combining marks; the rest of its run is one marker that counts
them (web/combining-marks.js, docs/web.md, ADR 0125). One grapheme cluster of `Z` and 131,000
U+0301 (256 KiB, within a field's limit) kept Chromium's main thread busy 19 to 43 s in a
command, a work directory, a title, a reply or an output: docs/security.md says a hostile agent
cannot freeze the page.

The test asserts what is drawn, never how long it took: 2,000 marks lay out in milliseconds
even unbounded, and the page without the bound fails here at once, on its text."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage, user_text

from support.acp import agent_text, codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MAX_MARKS = 16  # web/combining-marks.js
ACUTE = "\u0301"
MARKS = 2_000
CLUSTER = "Q" + ACUTE * MARKS  # no precomposed Q with an acute: nothing could fold it
DRAWN = "Q" + ACUTE * MAX_MARKS + f"⟨+{MARKS - MAX_MARKS:,} combining marks⟩"  # +1,984
SHORT = "Q" + ACUTE * 40  # the agent and a stop reason hold at most 64 characters
SHORT_DRAWN = "Q" + ACUTE * MAX_MARKS + f"⟨+{40 - MAX_MARKS} combining marks⟩"
# What continues a grapheme cluster, as web/combining-marks.js counts it.
MARK = r"[\p{M}\p{Grapheme_Extend}\p{Emoji_Modifier}\u200D\u0E33\u0EB3]"
# A run of marks split by a colour change is still one run for the browser.
SPLIT = "Q" + ACUTE * 10 + "\x1b[31m" + ACUTE * 10 + "\x1b[0m"
# 300 colours of 10 marks each: more cuts than one text draws as markers (200).
MANY = "Q" + "".join(f"\x1b[3{i % 8}m" + ACUTE * 10 for i in range(300)) + "\x1b[0m"
OUTPUT = f"out {CLUSTER}\n{SPLIT}\n{MANY}\n"
# What Copy output copies: the real marks, colours dropped.
OUTPUT_SHOWN = f"out {CLUSTER}\n" + "Q" + ACUTE * 20 + "\n" + "Q" + ACUTE * 3000 + "\n"
MAX_MARK_MARKERS = 200  # web/combining-marks.js
TIMES = "\u00d7"  # the sign a marker's tooltip counts a kind of mark with
CUT = MARKS - MAX_MARKS


def text_of(locator: Locator) -> str:
    text = locator.text_content()
    assert text is not None
    return text


def test_a_character_draws_at_most_16_combining_marks_wherever_the_page_draws_text(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session(f"helper {SHORT}")
    turn_id = api.start_turn(session["id"])
    api.publish(session["id"], user_text(f"Prompt {CLUSTER}"))
    call = unique("call")
    message_id = api.play(session["id"], [
        codex_start(call, f"echo {CLUSTER}", work_dir=f"/tmp/{CLUSTER}"),
        codex_end(call, OUTPUT, 0),
    ])
    tool_id = api.play(session["id"], [{
        "sessionUpdate": "tool_call", "toolCallId": unique("read"), "kind": "read",
        "title": f"Read {CLUSTER}", "status": "completed"}])
    # In a paragraph, in inline code, and split by an emphasis (still one run of 20 marks).
    api.publish(session["id"], agent_text(
        f"Reply {CLUSTER}\n\nCode `{CLUSTER}`\n\nSplit Q{ACUTE * 10}*{ACUTE * 10}*"))
    api.complete_turn(session["id"], turn_id, f"end_turn {SHORT}")
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    row = chat.shell_row(message_id)
    command = row.get_by_test_id("shell-command")
    assert text_of(command) == f"echo {DRAWN}"
    expect(command.locator(".combining-marks")).to_have_attribute(
        "title", re.compile(rf"^{CUT:,} more combining marks .*U\+0301 {TIMES}{CUT}$"))
    assert text_of(row.get_by_test_id("shell-workdir")) == f"/tmp/{DRAWN}"
    title = chat.page.locator(f'[data-testid=tool-call-row][data-message-id="{tool_id}"]'
                              ).get_by_test_id("tool-call-title")
    assert text_of(title) == f"Read {DRAWN}"
    prompt, reply = chat.page.get_by_test_id("chat-text").all()
    assert text_of(prompt) == f"Prompt {DRAWN}"
    assert text_of(reply.locator("p").first) == f"Reply {DRAWN}"
    assert text_of(reply.locator("code")) == DRAWN
    split = "Split Q" + ACUTE * MAX_MARKS + "⟨+4 combining marks⟩"
    assert text_of(reply.locator("p").last) == split
    assert text_of(chat.page.get_by_test_id("session-agent")) == f"helper {SHORT_DRAWN}"
    assert text_of(chat.page.get_by_test_id("turn-stop-reason")) == f"end_turn {SHORT_DRAWN}"

    body = chat.expand_finished(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text(f"out {DRAWN}\nQ{ACUTE * MAX_MARKS}⟨+4 combining marks⟩\n")
    # One output chunk draws 200 markers and a note; then each cut is written as text: on the
    # third line, 198 markers (after 10 marks and 6 more), then 101 counts as text.
    expect(stdout.locator(".combining-marks")).to_have_count(MAX_MARK_MARKERS + 1)
    expect(stdout.locator(".combining-marks--limit")).to_have_count(1)
    assert text_of(stdout).count("<+10 combining marks>") == 101

    # Nowhere in the page, the unseen names of the buttons and the output included, does a
    # character hold more than 16 marks.
    too_many = f"/{MARK}{{{MAX_MARKS + 1}}}/u"
    assert chat.page.evaluate(f"() => !{too_many}.test(document.body.textContent)")

    # The copy buttons copy the real text.
    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    assert chat.copied(row.get_by_test_id("shell-command-copy")) == f"echo {CLUSTER}"
    assert chat.copied(body.get_by_test_id("shell-output-copy")) == OUTPUT_SHOWN

    # The page goes on: a live reply still arrives and is drawn.
    api.publish(session["id"], agent_text("still here"))
    expect(chat.page.get_by_test_id("chat-text").last).to_have_text("still here")

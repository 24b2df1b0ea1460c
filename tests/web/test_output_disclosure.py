"""The output disclosure in real Chromium against the real service: one shell output for a
finished command, bounded non-overlapping polling for a running one, stopping on terminal,
collapse and navigation, and surviving failed requests (issue 4 "The disclosure's
behaviour"; spec scenarios "a persisted completed shell message", "a running shell message
with its disclosure expanded", "an expanded running shell message", "an output request
fails")."""

from __future__ import annotations

import itertools
import json

import pytest
from playwright.sync_api import Route, expect
from web.chat import ChatPage, ShellFetch, codex_delta, generic_start

from shellexec.vocabulary import TERMINAL_STATUSES

from support.acp import agent_text, codex_end
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BASE_DELAY_MS = 1000
MAX_DELAY_MS = 5000
# Timing tolerance: Envoy, the server and Chromium share two cores with the test itself.
SLACK_MS = 150


def big_log(marker: str, size: int = 300 * 1024) -> str:
    """About `size` bytes of realistic log lines, first and last lines marked."""
    lines = [f"FIRST LINE {marker}"]
    total = len(lines[0]) + 1
    i = 0
    while total < size:
        line = (f"2026-11-29T09:{i // 3600 % 60:02}:{i // 60 % 60:02}.{i % 1000:03}Z INFO "
                f"worker-{i % 8} processed batch {i:05} of 9000 rows=512 ok")
        lines.append(line)
        total += len(line) + 1
        i += 1
    lines.append(f"LAST LINE {marker}")
    return "\n".join(lines) + "\n"


def settle_gaps(fetches: list[ShellFetch]) -> list[float]:
    """For each fetch after the first: ms from the previous one settling to its start."""
    gaps = []
    for previous, current in itertools.pairwise(fetches):
        assert previous.end is not None, "a request started while another was in flight"
        gaps.append(current.start - previous.end)
    return gaps


def running_command(api: Api, session_id: str, command: str,
                    first_output: str) -> tuple[str, str]:
    """Starts a command that prints `first_output` and keeps running: (call id, message id)."""
    call = unique("call")
    message_id = api.play(session_id, [generic_start(call, command),
                                       codex_delta(call, first_output)])
    return call, message_id


def test_expanding_completed_command_fetches_exactly_one_shell_output(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session = api.new_session("codex")
    sid = session["id"]
    api.start_turn(sid)
    call = unique("call")
    marker = unique("log")
    log = big_log(marker)
    message_id = api.play(sid, [generic_start(call, "cat logs/integration-run.log"),
                                codex_end(call, log, 1)])
    api.publish(sid, agent_text("The log is long; the failure is in its last lines."))

    chat.open(f"{stack.rest_url}/?session={sid}")
    row = chat.shell_row(message_id)
    expect(row).to_have_attribute("data-result", "failure")
    assert chat.shell_requests() == []

    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-state", "ready")
    expect(body).to_have_attribute("data-poll-state", "done")
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text(f"LAST LINE {marker}")  # the newest text is kept
    assert f"FIRST LINE {marker}" not in (stdout.text_content() or "")
    expect(body.get_by_test_id("shell-output-truncated")).to_be_visible()
    exit_line = body.get_by_test_id("shell-exit")
    expect(exit_line).to_have_text("Exit code 1")
    expect(exit_line).to_have_attribute("data-exit-code", "1")

    chat.pump(2 * BASE_DELAY_MS + 500)  # a finished command is never polled again
    assert len(chat.shell_requests(message_id)) == 1
    assert len(chat.shell_fetches(message_id)) == 1

    # A scrollable monospace region, in normal flow: it pushes the next message down.
    region: dict[str, str] = stdout.evaluate(
        "el => ({font: getComputedStyle(el).fontFamily, overflow: getComputedStyle(el).overflowY,"
        " scrolls: String(el.scrollHeight > el.clientHeight)})")
    assert "mono" in region["font"].lower(), region
    assert region["overflow"] in ("auto", "scroll"), region
    assert region["scrolls"] == "true", region
    next_message = chat.page.locator(
        f'[data-message-id="{message_id}"] + li[data-message-id]')
    expect(next_message).to_contain_text("The log is long")
    body_box = chat.box(body)
    row_box = chat.box(row)
    next_box = chat.box(next_message)
    assert body_box["y"] + body_box["height"] <= row_box["y"] + row_box["height"] + 0.5
    assert row_box["y"] + row_box["height"] <= next_box["y"] + 0.5, (row_box, next_box)
    chat.assert_no_horizontal_overflow()
    stdout.evaluate("el => el.scrollIntoView({block: 'center'})")
    chat.screenshot("expanded-truncated")


def test_running_command_polls_boundedly_and_stops_after_terminal_shell_output(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("codex")
    sid = session["id"]
    api.start_turn(sid)
    call = unique("call")
    api.publish(sid, generic_start(call, "pytest tests/integration -x -q"))
    message_id = api.play(sid, [codex_delta(call, "collecting ... collected 3 items\n")])

    chat.open(f"{stack.rest_url}/?session={sid}")
    row = chat.shell_row(message_id)
    expect(row).to_have_attribute("data-result", "running")
    expect(chat.toggle(message_id)).to_have_attribute("aria-expanded", "false")  # not by itself
    chat.pump(500)
    assert chat.shell_requests() == []

    body = chat.expand(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_have_text("collecting ... collected 3 items")
    expect(body.get_by_test_id("shell-exit")).to_have_count(0)  # no exit line while running

    # Output updates live while the disclosure polls.
    api.publish(sid, codex_delta(call, "tests/integration/test_api.py::test_list PASSED\n"))
    expect(stdout).to_contain_text("test_list PASSED")
    window_start = chat.now()
    chat.pump(4000)
    api.publish(sid, codex_delta(call, "tests/integration/test_api.py::test_tz FAILED\n"))
    expect(stdout).to_contain_text("test_tz FAILED")
    window_end = chat.now()

    fetches = chat.shell_fetches(message_id)
    in_window = [f for f in fetches if window_start <= f.start <= window_end]
    seconds = (window_end - window_start) / 1000
    # About one per second: never more than one per (1 s + a little), never stalled.
    assert seconds * 0.5 <= len(in_window) <= seconds + 1.5, (len(in_window), seconds)
    assert chat.max_in_flight() == 1
    for gap in settle_gaps(fetches):
        assert gap >= BASE_DELAY_MS - SLACK_MS, settle_gaps(fetches)
    assert all(f.shell_output_status == "running" for f in fetches if f.outcome == "200")

    # The command finishes: the feed makes it terminal, one final shell output, then no more.
    final_text = ("collecting ... collected 3 items\n"
                  "tests/integration/test_api.py::test_list PASSED\n"
                  "tests/integration/test_api.py::test_tz FAILED\n"
                  "FAILED tests/integration/test_api.py::test_tz - AssertionError\n")
    api.publish(sid, codex_end(call, final_text, 2))
    expect(row).to_have_attribute("data-status", "failed")
    expect(body).to_have_attribute("data-poll-state", "done")
    expect(body.get_by_test_id("shell-exit")).to_have_text("Exit code 2")
    assert stdout.text_content() == final_text  # the final text replaces, never duplicates

    terminal_at = chat.terminal_event_at(message_id)
    fetches = chat.shell_fetches(message_id)
    before = [f for f in fetches if f.start < terminal_at]
    after = [f for f in fetches if f.start >= terminal_at]
    if before[-1].shell_output_status in TERMINAL_STATUSES:
        assert after == []  # a regular poll already brought the terminal shell output
    else:
        assert len(after) == 1, after  # exactly one final fetch ...
        assert after[0].shell_output_status == "failed"
        in_flight = before[-1].end is None or before[-1].end > terminal_at
        if in_flight:  # ... and the poll still in flight was aborted
            assert before[-1].outcome == "AbortError", before[-1]
    assert chat.max_in_flight() == 1
    done_count = len(chat.shell_requests(message_id))
    chat.pump(2 * BASE_DELAY_MS + 500)
    assert len(chat.shell_requests(message_id)) == done_count
    assert len(chat.shell_fetches(message_id)) == len(fetches)
    chat.screenshot("running-then-failed")


def test_collapse_stops_polling_and_leaves_no_request_open(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("codex")
    sid = session["id"]
    api.start_turn(sid)
    _, message_id = running_command(api, sid, "npm run watch", "watching for file changes...\n")

    chat.open(f"{stack.rest_url}/?session={sid}")
    body = chat.expand(message_id)
    expect(body.get_by_test_id("shell-output-stdout")).to_contain_text("watching")
    chat.pump(BASE_DELAY_MS + 600)
    assert len(chat.shell_fetches(message_id)) >= 2  # it was polling

    chat.collapse(message_id)
    chat.pump(100)
    assert all(f.end is not None for f in chat.shell_fetches(message_id))  # none left open
    on_wire = len(chat.shell_requests(message_id))
    made = len(chat.shell_fetches(message_id))
    chat.pump(3 * BASE_DELAY_MS)
    assert len(chat.shell_requests(message_id)) == on_wire
    assert len(chat.shell_fetches(message_id)) == made
    expect(chat.body(message_id)).to_have_count(0)
    expect(chat.shell_row(message_id)).to_have_attribute("data-expanded", "false")

    # Opening again starts over with one immediate request.
    chat.expand(message_id)
    expect(chat.body(message_id)).to_have_attribute("data-state", "ready")
    assert len(chat.shell_fetches(message_id)) == made + 1 or \
        len(chat.shell_fetches(message_id)) == made + 2  # a second poll may already be due
    chat.collapse(message_id)


def test_navigating_away_stops_polling(stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("codex")
    sid = session["id"]
    api.start_turn(sid)
    _, message_id = running_command(api, sid, "cargo watch -x test",
                                    "[Running 'cargo test']\n")
    other = api.new_session("claude")

    chat.open(f"{stack.rest_url}/?session={sid}")
    chat.expand(message_id)
    expect(chat.body(message_id)).to_have_attribute("data-state", "ready")
    chat.pump(BASE_DELAY_MS + 600)
    assert len(chat.shell_requests(message_id)) >= 2

    chat.open(f"{stack.rest_url}/sessions/{other['id']}")
    expect(chat.page.get_by_test_id("empty-chat")).to_be_visible()
    on_wire = len(chat.shell_requests(message_id))
    chat.pump(3 * BASE_DELAY_MS)
    assert len(chat.shell_requests(message_id)) == on_wire
    assert chat.shell_requests() == chat.shell_requests(message_id)


def test_failed_request_keeps_transcript_then_recovers(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    """The only routed fake in the suite: the shell-output route answers 503 for a while."""
    session = api.new_session("codex")
    sid = session["id"]
    api.start_turn(sid)
    call, message_id = running_command(api, sid, "./gradlew build --continuous",
                                       "> Task :compile\n")

    chat.open(f"{stack.rest_url}/?session={sid}")
    body = chat.expand(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_have_text("> Task :compile")
    expect(body).to_have_attribute("data-state", "ready")

    failing = {"count": 0}

    def unavailable(route: Route) -> None:
        failing["count"] += 1
        route.fulfill(status=503, content_type="application/json",
                      body=json.dumps({"code": 14, "message": "upstream unavailable"}))

    pattern = f"**/messages/{message_id}/shell-output"
    chat.page.route(pattern, unavailable)
    expect(body).to_have_attribute("data-state", "unavailable")
    notice = body.get_by_test_id("shell-output-unavailable")
    expect(notice).to_be_visible()
    expect(stdout).to_have_text("> Task :compile")  # the last good transcript stays
    expect(chat.toggle(message_id)).to_have_attribute("aria-expanded", "true")  # still open
    chat.screenshot("output-unavailable")

    # Keep failing for three requests: the retries back off (1 s, then 2 s ...).
    def failures() -> list[ShellFetch]:
        return [f for f in chat.shell_fetches(message_id) if f.outcome == "503"]

    for _ in range(200):
        if len(failures()) >= 3:
            break
        chat.pump(100)
    failed = failures()
    assert len(failed) == 3, failed
    assert failing["count"] == 3
    gaps = settle_gaps(failed)
    assert gaps[0] >= BASE_DELAY_MS - SLACK_MS, gaps
    assert gaps[1] >= 2 * BASE_DELAY_MS - SLACK_MS, gaps
    assert all(gap <= MAX_DELAY_MS + 1000 for gap in gaps), gaps
    assert chat.max_in_flight() == 1

    # Output moved on meanwhile; once the route answers again the disclosure recovers.
    api.publish(sid, codex_delta(call, "> Task :test\n"))
    chat.pump(300)
    expect(stdout).to_have_text("> Task :compile")  # nothing arrives while requests fail
    chat.page.unroute(pattern)
    recovered_from = chat.now()
    expect(body).to_have_attribute("data-state", "ready", timeout=MAX_DELAY_MS + 3000)
    expect(notice).to_have_count(0)
    expect(stdout).to_have_text("> Task :compile\n> Task :test")
    recovered = [f for f in chat.shell_fetches(message_id) if f.outcome == "200"
                 and f.start >= failed[-1].start]
    assert recovered, "no successful request after the failures"
    last_failure_end = failed[-1].end
    assert last_failure_end is not None
    # The third consecutive failure waited 4 s (1, 2, 4 ... capped at 5).
    assert 4 * BASE_DELAY_MS - SLACK_MS <= recovered[0].start - last_failure_end \
        <= MAX_DELAY_MS + SLACK_MS
    # ... and polling returns to the base interval after the success.
    chat.pump(2 * BASE_DELAY_MS + 400)
    after = [f for f in chat.shell_fetches(message_id) if f.start >= recovered_from]
    assert len(after) >= 2, after
    assert settle_gaps(after)[0] <= BASE_DELAY_MS + 600, settle_gaps(after)


def test_open_disclosure_follows_a_late_terminal_update(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    """Spec: a terminal update after the turn settled reconciles the existing transcript."""
    session = api.new_session("codex")
    sid = session["id"]
    turn = api.start_turn(sid)
    call, message_id = running_command(api, sid, "npm run dev", "ready in 412 ms\n")
    chat.open(f"{stack.rest_url}/?session={sid}")
    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-state", "ready")

    api.complete_turn(sid, turn, "cancelled")
    expect(chat.shell_row(message_id)).to_have_attribute("data-status", "cancelled")
    expect(body).to_have_attribute("data-poll-state", "done")
    expect(body.get_by_test_id("shell-exit")).to_have_text("Exit code unavailable")

    # The provider reports the end late: the row's badge follows; so must the open body.
    api.publish(sid, codex_end(call, "ready in 412 ms\n^C\n", 130))
    expect(chat.shell_row(message_id)).to_have_attribute("data-exit-code", "130")
    expect(body.get_by_test_id("shell-exit")).to_have_text("Exit code 130", timeout=3000)
    expect(body.get_by_test_id("shell-output-stdout")).to_contain_text("^C")

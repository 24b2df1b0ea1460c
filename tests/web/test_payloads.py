"""What reaches the browser while a disclosure is collapsed: summaries with byte counts, never
an output body, and no shell-output request (spec scenario "a collapsed shell command with
persisted output"), inspected in the responses and feed events the page itself received."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage, Json, codex_delta, generic_start, walk_keys

from support.acp import codex_end
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def shell_summaries(value: object) -> list[Json]:
    """Every `shell_exec.output` summary anywhere in a JSON value."""
    found: list[Json] = []
    if isinstance(value, dict):
        shell = value.get("shell_exec")
        if isinstance(shell, dict) and isinstance(shell.get("output"), dict):
            found.append(shell["output"])
        for item in value.values():
            found += shell_summaries(item)
    elif isinstance(value, list):
        for item in value:
            found += shell_summaries(item)
    return found


def assert_summaries_only(payload: object, secrets: list[str], where: str) -> list[Json]:
    keys = set(walk_keys(payload))
    assert "stdout" not in keys, (where, payload)
    assert "stderr" not in keys, (where, payload)
    text = repr(payload)
    for secret in secrets:
        assert secret not in text, (where, secret)
    summaries = shell_summaries(payload)
    for summary in summaries:
        assert set(summary) >= {"truncated", "has_output", "stdout_bytes", "stderr_bytes"}, \
            (where, summary)
    return summaries


def test_collapsed_command_payloads_carry_byte_counts_but_no_output(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    task = unique("task")
    session = api.new_session("codex", task_id=task)
    sid = session["id"]
    api.start_turn(sid)
    persisted = f"persisted-body-{unique('s')}\n"
    call = unique("call")
    done_id = api.play(sid, [generic_start(call, "make build"), codex_end(call, persisted, 0)])
    running_call = unique("call")
    live_first = f"live-body-{unique('s')}\n"
    running_id = api.play(sid, [generic_start(running_call, "make test"),
                                codex_delta(running_call, live_first)])
    secrets = [persisted.strip(), live_first.strip()]

    # Boot state (`/?task=`): the page's whole initial payload.
    chat.open(f"{stack.rest_url}/?task={task}")
    expect(chat.shell_row(done_id)).to_have_attribute("data-has-output", "true")
    boot = [body for url, body in chat.api_bodies() if "/boot-state" in url]
    assert len(boot) == 1
    summaries = assert_summaries_only(boot[0], secrets, "boot-state")
    assert {s["stdout_bytes"] for s in summaries} == {len(persisted), len(live_first)}
    assert [s.get("exit_code") for s in summaries] == [0, None]

    # Message list (`/?session=`), then live notifications while everything stays collapsed.
    chat.open(f"{stack.rest_url}/?session={sid}")
    lists = [body for url, body in chat.api_bodies() if "/messages?" in url]
    assert lists, chat.api_bodies()
    for body in lists:
        assert_summaries_only(body, secrets, "message list")
    live_more = f"more-live-body-{unique('s')}\n"
    final = live_first + live_more + "FAILED 1 test\n"
    secrets += [live_more.strip(), "FAILED 1 test"]
    api.publish(sid, codex_delta(running_call, live_more))
    api.publish(sid, codex_end(running_call, final, 1))
    row = chat.shell_row(running_id)
    expect(row).to_have_attribute("data-status", "failed")
    expect(row).to_have_attribute("data-exit-code", "1")
    expect(chat.toggle(running_id)).to_contain_text(f"{len(final)} B")

    events = [event for event, _ in chat.feed_events()
              if event.get("type", "").startswith("session.message.")]
    assert len(events) >= 2, events
    for event in events:
        assert_summaries_only(event, secrets, "feed event")
    last = shell_summaries(events[-1])[-1]
    assert last == {"exit_code": 1, "truncated": False, "has_output": True,
                    "stdout_bytes": len(final), "stderr_bytes": 0}
    expect(chat.page.get_by_test_id("shell-output-body")).to_have_count(0)
    chat.pump(1200)
    assert chat.shell_requests() == []
    assert chat.shell_fetches() == []

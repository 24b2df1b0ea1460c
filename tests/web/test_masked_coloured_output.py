"""A credential that a tool's colours split is masked on the page too (docs/security.md,
"Secrets in output"; ADR 0126): `grep --color=always` wraps each match in escape sequences,
the page drops them and joins the text back, and the service must mask what the page shows,
not only what it stores."""

from __future__ import annotations

import pytest
from web.chat import ChatPage

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

E = "\x1b"
# What `grep --color=always` puts around a match (GNU grep's defaults).
MATCH_ON, MATCH_OFF = f"{E}[01;31m{E}[K", f"{E}[m{E}[K"
TOKEN_BODY = "R2d2C3poBb8Yy7Lk4Qw9Zx1Vn5Mm3Jh6Tg0Pq"  # a GitHub token's body (fake)
PASSWORD = "correct-horse-battery-staple"


def test_a_credential_highlighted_by_grep_is_not_shown_unmasked(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    plain = f"config.yml:3:  token: ghp_{TOKEN_BODY}\n"
    coloured = (f"config.yml:3:  token: {MATCH_ON}ghp_{MATCH_OFF}{TOKEN_BODY}\n"
                f".env:1:MY_{MATCH_ON}PASSWORD{MATCH_OFF}={PASSWORD}\n")
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [
        codex_start(call, "grep -rn --color=always ghp_ ."),
        codex_end(call, plain + coloured, 0)])

    chat.open(f"{stack.rest_url}/?session={session['id']}")
    body = chat.expand_finished(message_id)
    shown = body.get_by_test_id("shell-output-stdout").text_content() or ""

    masked_token = "ghp_" + "*" * len(TOKEN_BODY)
    assert shown.splitlines() == [
        f"config.yml:3:  token: {masked_token}",
        f"config.yml:3:  token: {masked_token}",
        f".env:1:MY_PASSWORD={'*' * len(PASSWORD)}",
    ]
    # The colours are still drawn: each highlighted part is a styled run of its own.
    runs: list[str] = body.get_by_test_id("shell-output-stdout").evaluate(
        "el => [...el.querySelectorAll('span[class]')].map(span => span.textContent)")
    assert runs.count("ghp_") == 1
    assert runs.count("PASSWORD") == 1


def test_a_masked_value_keeps_the_colour_reset_after_it(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # `git diff --color` of an .env file: the value runs on to the reset that ends the line's
    # green, and a mask that took the reset with it left the rest of the output green.
    diff = (f"{E}[1mdiff --git a/.env b/.env{E}[m\n"
            f"{E}[31m-API_KEY=old-{PASSWORD}{E}[m\n"
            f"{E}[32m+API_KEY=new-{PASSWORD}{E}[m\n"
            " DEBUG=1\n")
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [
        codex_start(call, "git diff --color=always .env"),
        codex_end(call, diff, 0)])

    chat.open(f"{stack.rest_url}/?session={session['id']}")
    body = chat.expand_finished(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    masked = "*" * len(f"old-{PASSWORD}")
    assert (stdout.text_content() or "").splitlines() == [
        "diff --git a/.env b/.env", f"-API_KEY={masked}", f"+API_KEY={masked}", " DEBUG=1"]
    # Styled runs, not the chunks that hold them.
    runs: list[str] = stdout.evaluate(
        "el => [...el.querySelectorAll('span[class]:not(.output__chunk)')]"
        ".map(span => span.textContent)")
    assert f"+API_KEY={masked}" in runs
    assert not [run for run in runs if "DEBUG" in run]

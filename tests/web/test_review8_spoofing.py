"""Review 8 (attacker's review of the page): a credential the service masks must stay masked on
the page.

- Masking (ADR 0058) runs on the stored text, escape sequences included, while the page shows
  the text with them dropped: `grep --color=always` highlighting part of a credential splits
  it with SGR sequences, so no pattern matches, and the page joins it back, unmasked.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

E = "\x1b"
# What `grep --color=always` puts around a match (GNU grep's defaults).
MATCH_ON, MATCH_OFF = f"{E}[01;31m{E}[K", f"{E}[m{E}[K"
TOKEN_BODY = "R2d2C3poBb8Yy7Lk4Qw9Zx1Vn5Mm3Jh6Tg0Pq"  # 38 characters, a GitHub token body
PASSWORD = "correct-horse-battery-staple"


def finished_command(api: Api, command: str, output: str = "ok\n") -> tuple[str, str]:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, command), codex_end(call, output, 0)])
    return session["id"], message_id


def test_a_credential_highlighted_by_grep_is_not_shown_unmasked(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    plain = f"config.yml:3:  token: ghp_{TOKEN_BODY}\n"
    coloured = (f"config.yml:3:  token: {MATCH_ON}ghp_{MATCH_OFF}{TOKEN_BODY}\n"
                f".env:1:MY_{MATCH_ON}PASSWORD{MATCH_OFF}={PASSWORD}\n")
    session_id, message_id = finished_command(api, "grep -rn --color=always ghp_ .",
                                              plain + coloured)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-poll-state", "done")
    shown = body.get_by_test_id("shell-output-stdout").text_content() or ""

    lines = shown.splitlines()
    assert lines[0] == "config.yml:3:  token: ghp_" + "*" * len(TOKEN_BODY)  # masked uncoloured
    assert TOKEN_BODY not in shown, lines[1]
    assert PASSWORD not in shown, lines[2]

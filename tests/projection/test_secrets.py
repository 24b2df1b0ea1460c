"""The credential patterns (docs/security.md, "Secrets in output"), one realistic fake of each,
text that must stay as it is, and the byte-length rule that keeps summaries true.

The fakes are assembled from parts so that no scanner mistakes this file for a leak.
"""

from __future__ import annotations

import itertools
import re

import pytest

from shellexec.app.settings import Settings
from shellexec.normalize import ShellOutput, ShellRecord
from shellexec.projection import NO_MASKING, Masking
from shellexec.projection.secrets import (
    CONTEXT_CHARS,
    PATTERNS,
    SHORT_HINTS,
    _context,
    mask_continuation,
    mask_json,
    mask_secrets,
    secret_spans,
)
from shellexec.projection.shown import shown_text

AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SESSION_KEY_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "R2d2C3p0L1ghtS4b3rXw1ngY0d4H4nS0L0Ch"
GITHUB_APP = "ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a"
GITHUB_FINE = "github_pat_" + "11ABCDEFG0123456789abc_" + "x" * 59
GITLAB = "glpat-" + "Xq9vK2mN8pL4rT6wZ1yB"
OPENAI = "sk-" + "Tz8K3mWq9LpX2vN5bR7cY1dF4hJ6gS0aE3uI8oP2kM9nB4vC"
OPENAI_PROJECT = "sk-proj-" + "4fGh7_Jk-9LmNpQ2rStUvWxYz0AbCdEfGhIjKlMnOpQrStUvWxYz-1234567890ab"
ANTHROPIC = "sk-ant-api03-" + "Zx81_bC4dE-fG7hI0jK3lM6nO9pQ2rS5tU8vW1xY4zA7bC0dE3fG6hI9jK2lM5nOAA"
SLACK = "xoxb-" + "2048675309-4815162342-q7Rt2Yp9Lm4Kx8Vz1Nb6Wc3S"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6"
       "IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naIkRhp2Kc1Q=\n"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----"


def _masked(secret: str) -> str:
    return "*" * len(secret.encode("utf-8"))


@pytest.mark.parametrize(("text", "expected"), [
    (f"key id {AWS_KEY_ID} in use", f"key id AKIA{_masked(AWS_KEY_ID[4:])} in use"),
    (f"AWS_ACCESS_KEY_ID={AWS_SESSION_KEY_ID}", f"AWS_ACCESS_KEY_ID=ASIA{_masked('x' * 16)}"),
    (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {_masked(AWS_SECRET)}"),
    (f"remote: {GITHUB}\n", f"remote: ghp_{_masked(GITHUB[4:])}\n"),
    (f"token={GITHUB_APP}", f"token={_masked(GITHUB_APP)}"),
    (f"use {GITHUB_FINE}", f"use github_pat_{_masked(GITHUB_FINE[11:])}"),
    (f"GITLAB {GITLAB} ok", f"GITLAB glpat-{_masked(GITLAB[6:])} ok"),
    (f"openai.api_key('{OPENAI}')", f"openai.api_key('sk-{_masked(OPENAI[3:])}')"),
    (f"key: {OPENAI_PROJECT}", f"key: sk-proj-{_masked(OPENAI_PROJECT[8:])}"),
    (f"x-api-key: {ANTHROPIC}", f"x-api-key: sk-ant-{_masked(ANTHROPIC[7:])}"),
    (f"SLACK_BOT={SLACK};", f"SLACK_BOT=xoxb-{_masked(SLACK[5:])};"),
    (f"cookie jwt={JWT} path=/", f"cookie jwt=eyJ{_masked(JWT[3:])} path=/"),
    (f"echo ${{JWT:-{JWT}}}", f"echo ${{JWT:-eyJ{_masked(JWT[3:])}}}"),
    (f"{PEM}\nafter", "-----BEGIN RSA PRIVATE KEY-----\n"
                      + "\n".join(_masked(line) for line in PEM_BODY.split("\n"))
                      + "-----END RSA PRIVATE KEY-----\nafter"),
    ("DB_PASSWORD=correct horse battery\nNEXT=1", f"DB_PASSWORD={_masked('correct')} "
     f"{_masked('horse')} {_masked('battery')}\nNEXT=1"),
    # A reply in Markdown may escape a name's underscores; the page shows them unescaped.
    ("AWS\\_SECRET\\_ACCESS\\_KEY=wJalrXUtnFEMI/K7MDENG\n\nrun MY\\_API\\_KEY=abc123 now",
     f"AWS\\_SECRET\\_ACCESS\\_KEY={_masked('wJalrXUtnFEMI/K7MDENG')}\n\n"
     f"run MY\\_API\\_KEY={_masked('abc123')} now"),
    # A terminal ends its lines with CRLF.
    ("DB_PASSWORD=correct horse battery\r\nNEXT=1", f"DB_PASSWORD={_masked('correct')} "
     f"{_masked('horse')} {_masked('battery')}\r\nNEXT=1"),
    ("export STRIPE_SECRET='s3cr3t value'", "export STRIPE_SECRET=******* ******"),
    ("docker run -e API_KEY=abc123 -p 80 web", "docker run -e API_KEY=****** -p 80 web"),
    ('curl -H "Authorization: Bearer abcdefghij0123456789xyz" https://api',
     'curl -H "Authorization: Bearer ***********************" https://api'),
    ("git clone https://deploy:hunter2pass@git.example.com/repo.git",
     "git clone https://deploy:***********@git.example.com/repo.git"),
    # A scheme's case does not matter (RFC 3986), nor what comes before it.
    ("GIT CLONE HTTPS://deploy:hunter2pass@git.example.com",
     "GIT CLONE HTTPS://deploy:***********@git.example.com"),
    ("pip install -e git+ssh://bot:t0ps3cret@example.com/pkg",
     "pip install -e git+ssh://bot:*********@example.com/pkg"),
])
def test_each_credential_form_is_masked_keeping_its_shape(text: str, expected: str) -> None:
    assert mask_secrets(text) == expected


@pytest.mark.parametrize("text", [
    "All 42 tests passed in 3.1 s; password reset flow covered",
    "commit 3f786850e387550fdab836ed7e6dc881de23001f (HEAD -> main)",
    "request 123e4567-e89b-12d3-a456-426614174000 done",
    "max_tokens = 4096",
    "the task-list of a risk-management skeleton",
    "eyJ alone is not a JWT, nor is eyJabc.def here",
    "http://localhost:8080/api/v1/tasks",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "AKIAshort and ghp_tooShort ",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
])
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    assert mask_secrets(text) == text


def test_every_pattern_has_a_fake_above() -> None:
    fakes = "\n".join([AWS_KEY_ID, GITHUB, GITHUB_FINE, GITLAB, OPENAI, ANTHROPIC, SLACK, JWT,
                      PEM, "PASSWORD=x", "A=1 TOKEN=y", "Bearer abcdefghij0123456789",
                      "https://u:p@h/", f"aws_secret_access_key={AWS_SECRET}"])
    matched = {pattern.name for pattern in PATTERNS
               if any(True for _ in pattern.regex.finditer(fakes))}
    assert matched == {pattern.name for pattern in PATTERNS}


@pytest.mark.parametrize("text", [
    "PASSWORD=pässwörd-日本 and more",
    f"ünïcode {GITHUB} ✓\n{PEM}",
    "SECRET=\u00e9\u20ac\U0001f600",
])
def test_masking_keeps_the_utf8_byte_length(text: str) -> None:
    masked = mask_secrets(text)
    assert masked != text
    assert len(masked.encode("utf-8")) == len(text.encode("utf-8"))


def test_a_token_whose_rest_has_not_arrived_is_masked_at_the_end() -> None:
    first = f"pushing with {GITHUB[:20]}"
    assert mask_secrets(first) == f"pushing with ghp_{'*' * 16}"
    assert mask_secrets(f"half a key {AWS_KEY_ID[:9]}") == "half a key AKIA*****"


def test_the_rest_of_a_split_token_is_masked_in_the_context_of_the_first_part() -> None:
    first = mask_secrets(f"token {GITHUB[:20]}")
    assert mask_continuation(first, f"{GITHUB[20:]} pushed") == f"{'*' * 20} pushed"
    joined = first + GITHUB[20:] + " pushed"
    assert mask_secrets(joined) == f"token ghp_{'*' * 36} pushed"


@pytest.mark.parametrize(("text", "masked"), [
    ("Connect with postgres://admin:Sup3rS3cret", "Connect with postgres://admin:" + "*" * 11),
    ("redis://default:hunter2", "redis://default:*******"),
    ("served on http://localhost:8080", "served on http://localhost:8080"),  # a port
    ("a scheme ends a://b:", "a scheme ends a://b:"),
])
def test_a_url_password_whose_at_sign_has_not_arrived_is_masked_at_the_end(
        text: str, masked: str) -> None:
    assert mask_secrets(text) == masked


def test_the_rest_of_a_split_url_password_is_masked_with_it() -> None:
    first = mask_secrets("postgres://admin:Sup3r")
    assert mask_continuation(first, "S3cret@db.internal/app") == "******@db.internal/app"


def test_text_cut_at_its_head_is_masked_up_to_the_first_break() -> None:
    cut_key = AWS_KEY_ID[3:] + " listed\nnext"
    assert mask_secrets(cut_key) == cut_key
    assert mask_secrets(cut_key, head_cut=True) == f"{'*' * 17} listed\nnext"
    cut_block = PEM[40:] + "\nls\n"
    masked = mask_secrets(cut_block, head_cut=True)
    assert masked.endswith("-----END RSA PRIVATE KEY-----\nls\n")
    assert set(masked[:masked.index("-----END")]) <= {"*", "\n"}


@pytest.mark.parametrize(("stream", "cut"), [
    ("token " + "a" * 262_138, True),               # 262,144 bytes
    ("token " + "\U0001F600" * 65_534, True),       # 262,142: a 4-byte character did not fit
    ("token " + "\U0001F600" * 65_000, False),      # 260,006: below the bound
    ("token " + "a" * 262_100, False),
])
def test_only_a_stream_at_the_bound_counts_as_cut(stream: str, cut: bool) -> None:
    """`truncated` says one stream was cut, not which."""
    output = ShellOutput(stdout=stream, stderr="", truncated=True)
    masked = Masking().output(output).stdout
    assert masked is not None
    assert masked.startswith("***** ") is cut
    assert Masking().output(ShellOutput(stdout=stream, stderr="")).stdout == stream


@pytest.mark.parametrize("rest", ["[1;31m", "1;31m", ";31m", "31m", "1m", "m", "[m",
                                  "[38;5;196m", "[0K", "2 q"])
def test_a_secret_after_the_rest_of_a_colour_code_the_cut_began_in_is_masked(rest: str) -> None:
    """A cut after the ESC of `\x1b[1;31mAKIA...` left `[1;31mAKIA...`: no word boundary
    before the key, which was served in clear; a cut leaving `33m` before `Bearer` served
    the token after it."""
    masked = mask_secrets(f"{rest}{AWS_KEY_ID}\x1b[0m\nnext {AWS_KEY_ID}\n", head_cut=True)
    assert AWS_KEY_ID[4:] not in masked
    assert masked.endswith("\x1b[0m\nnext AKIA****************\n")
    bearer = mask_secrets(f"{rest}Bearer {LONG_JWT[:40]}\nok\n", head_cut=True)
    assert bearer.endswith("*" * 40 + "\nok\n")


LONG_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJ" + "c3ViIjoiMTIzNDU2Nzg5MCJ9" * 36 + ".SflKxwRJSMeKKF2QT4fw"
PEM_LINES = "\n".join("MIIEowIBAAKCAQEA" + f"{index:04d}" * 12 for index in range(24)) + "\n"


@pytest.mark.parametrize(("first", "rest"), [
    ("Authorization: Bearer " + LONG_JWT[:700], LONG_JWT[700:] + "\nok\n"),
    ("SESSION_TOKEN=" + "Qx9" * 330, "Qx9" * 50 + "\nok\n"),
    ("-----BEGIN RSA PRIVATE KEY-----\n" + PEM_LINES[:1200], PEM_LINES[1200:]),
])
def test_the_rest_of_a_secret_begun_more_than_a_window_back_is_masked(first: str,
                                                                      rest: str) -> None:
    """A delta is masked in the context of its stream's end. The context was the last 512
    characters, so the rest of a longer secret split across deltas (a JWT, a long token
    value, a private key sent in pieces) was stored in clear at rest."""
    before = mask_secrets("ls\n" * 300 + first)
    masked = mask_continuation(before, rest)
    secret_part = rest.removesuffix("\nok\n")
    assert set(masked[:len(secret_part)]) <= {"*", "\n"}
    assert masked[len(secret_part):] == rest[len(secret_part):]


@pytest.mark.parametrize(("line", "name"), [
    ("SESSION_TOKEN=" + "Qx9" * 200, "SESSION_TOKEN="),
    ("Authorization: Bearer " + LONG_JWT, "Authorization: Bearer "),
])
def test_the_rest_of_a_secret_is_masked_when_the_window_begins_inside_its_name(
        line: str, name: str) -> None:
    """The 512-character window beginning inside `SESSION_TOKEN=` or `Bearer ` held no name,
    and the value's rest was stored in clear."""
    for inside in range(1, len(name) + 1):
        split = 512 + inside  # the window starts `inside` characters into the line
        before = mask_secrets("ls\n" * 300 + line[:split])
        masked = mask_continuation(before, line[split:] + "\nok\n")
        assert masked == "*" * (len(line) - split) + "\nok\n", inside


@pytest.mark.parametrize("gap", [1, 100, 250, 900])
def test_the_rest_of_a_secret_is_masked_after_many_blanks_before_it(gap: int) -> None:
    """`Bearer`, or `NAME =`, and its value apart by many blanks: the line's reach stopped in
    the blanks, and the value's rest was stored in clear."""
    for head in ("Authorization: Bearer", "DB_PASSWORD ="):
        line = head + " " * gap + "Qx9" * 300
        split = len(line) - 200
        before = mask_secrets("ls\n" * 300 + line[:split])
        assert mask_continuation(before, line[split:] + "\nok\n") == "*" * 200 + "\nok\n"


def test_the_rest_of_a_secret_is_masked_when_its_name_is_far_back_across_colours_or_words(
        ) -> None:
    """What names a secret may lie a few hundred characters back on its line, across colour
    codes `grep --color` put inside the token or across the words of a passphrase."""
    token = "Qx9Zk7Wm2Lp4" * 125
    coloured = "".join(f"\x1b[01;31m\x1b[K{char}\x1b[m\x1b[K" if index % 100 == 99 else char
                       for index, char in enumerate(token))
    words = " ".join(token[index:index + 30] for index in range(0, 1500, 30))
    for line, split in (("Authorization: Bearer " + coloured, 700),
                        ("DB_PASSWORD=" + words, 600)):
        before = mask_secrets("ls -la output line\n" * 50 + line[:split])
        rest = mask_continuation(before, line[split:] + "\nok\n")
        shown = re.sub(r"\x1b\[[0-?]*[@-~]", "", rest.removesuffix("\nok\n"))
        assert set(shown) <= {"*", " "}, split


@pytest.mark.parametrize("inside", [70, 100, 120])
def test_a_key_body_is_masked_when_the_window_begins_inside_a_long_begin_line(
        inside: int) -> None:
    begin = "-----BEGIN ENCRYPTED " + "RSA " * 20 + "PRIVATE KEY-----\n"
    before = mask_secrets("ls\n" * 300 + begin + PEM_LINES)
    before = before[:len(before) - len(PEM_LINES) - len(begin) + inside + 512]
    body = "MIIEowIBAAKCAQEA" * 4 + "\n"
    assert mask_continuation(before, body) == "*" * 64 + "\n"


def test_a_key_id_on_a_line_like_a_key_s_end_is_masked() -> None:
    assert mask_secrets(f"build ok\n-----END {AWS_KEY_ID}") == (
        "build ok\n-----END AKIA****************")


def test_a_private_key_s_end_line_split_across_deltas_ends_the_block() -> None:
    """`-----EN` at a delta's end was masked as the key's body, so the block never ended in
    the stored text, and masking at rest hid every later delta within reach."""
    first = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_LINES + "-----EN"
    before = mask_secrets(first)
    assert before.endswith("\n-----EN")
    rest = "D RSA PRIVATE KEY-----\n$ ls\nREADME.md\n"
    assert mask_continuation(before, rest) == rest
    assert mask_continuation(before + rest, "$ ls\nsrc\n") == "$ ls\nsrc\n"


@pytest.mark.parametrize("before", [
    "x" * 9000,
    "*" * 9000,
    "Bearer " + "*" * 9000,
    "a" * 8000 + " bearer token=ghp_" + "*" * 1000,
    "-----BEGIN RSA PRIVATE KEY-----\n" + "\x1b[1m*\x1b[0m" * 900,
    "-----BEGIN " + "A" * 8000 + " PRIVATE KEY-----\n" + "*" * 600,
    "token/*" * 1300 + "*" * 600,  # a clear run of token characters and stars
    " " * 8000 + "*" * 600,
])
def test_a_continuation_s_context_stays_small(before: str) -> None:
    """Every string of an update is masked with the context: one update of 3,000 strings
    after an open key block took 4.3 s when the context reached back whole."""
    assert len(_context(before)) <= CONTEXT_CHARS


def test_a_byte_of_a_character_a_chunk_cut_in_two_is_masked_as_one_byte() -> None:
    """Terminal data is decoded with `surrogateescape`: `h\xc3` | `\xa9llo` (an `é` cut in
    two) gave a lone surrogate, and masking it raised UnicodeEncodeError, so the chunk was
    refused (500) and never stored."""
    raw = "DB_PASSWORD=h\u00e9llo-world\n".encode()
    first, rest = (part.decode("utf-8", "surrogateescape") for part in (raw[:14], raw[14:]))
    masked = mask_continuation(mask_secrets(first), rest)
    assert masked.encode("utf-8", "surrogateescape") == b"*" * 10 + b"\n"


def test_a_cut_stream_s_leading_run_is_masked_up_to_the_longest_token() -> None:
    assert mask_secrets("y" * 20_000, head_cut=True) == "*" * 8192 + "y" * (20_000 - 8192)


def test_a_private_key_block_still_streaming_is_masked_to_the_end() -> None:
    text = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}"
    assert mask_secrets(text) == "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(
        _masked(line) for line in PEM_BODY.split("\n"))


# What `grep --color=always` puts around a match (GNU grep's defaults), and other sequences a
# terminal shows nothing of.
MATCH_ON, MATCH_OFF = "\x1b[01;31m\x1b[K", "\x1b[m\x1b[K"
LINK_ON, LINK_OFF = "\x1b]8;;https://example.com\x1b\\", "\x1b]8;;\x07"


@pytest.mark.parametrize(("stored", "expected"), [
    (f"config.yml:3: {MATCH_ON}ghp_{MATCH_OFF}{GITHUB[4:]}\n",
     f"config.yml:3: {MATCH_ON}ghp_{MATCH_OFF}{_masked(GITHUB[4:])}\n"),
    (f".env:1:MY_{MATCH_ON}PASSWORD{MATCH_OFF}=correct-horse\n",
     f".env:1:MY_{MATCH_ON}PASSWORD{MATCH_OFF}={_masked('correct-horse')}\n"),
    # A colour change inside the secret: the code stays, the characters round it are masked.
    (f"key {GITLAB[:10]}\x1b[1;32m{GITLAB[10:]}\x1b[0m done",
     f"key glpat-{_masked(GITLAB[6:10])}\x1b[1;32m{_masked(GITLAB[10:])}\x1b[0m done"),
    (f"{LINK_ON}{AWS_KEY_ID}{LINK_OFF}", f"{LINK_ON}AKIA{_masked(AWS_KEY_ID[4:])}{LINK_OFF}"),
    # 8-bit CSI, a charset switch and a stray control character are not shown either.
    ("\x9b1mTOKEN\x9b0m=\x1b(Bs3cr3t\x00val", f"\x9b1mTOKEN\x9b0m=\x1b(B{_masked('s3cr3t')}\x00"
                                           f"{_masked('val')}"),
])
def test_a_secret_split_by_escape_sequences_is_masked_round_them(stored: str,
                                                                 expected: str) -> None:
    masked = mask_secrets(stored)
    assert masked == expected
    assert len(masked.encode("utf-8")) == len(stored.encode("utf-8"))


@pytest.mark.parametrize(("stored", "expected"), [
    # `git diff --color` of an .env file: the reset after the value ends the line's green.
    ("\x1b[32m+API_KEY=abc123\x1b[m\n DEBUG=1\n",
     f"\x1b[32m+API_KEY={_masked('abc123')}\x1b[m\n DEBUG=1\n"),
    # Colour changes inside a value that the stored text holds whole, in 7- and 8-bit CSI.
    ("API_KEY=ab\x1b[1mcd\x9b0mef\n", "API_KEY=**\x1b[1m**\x9b0m**\n"),
    ("https://deploy:hun\x1b[1mter2@host/", "https://deploy:***\x1b[1m****@host/"),
    # A CSI sequence cut off at the end of the text is not one yet: it is masked, and so is
    # one a mask's edge cuts (the password ends at the `@` that ends the sequence).
    ("TOKEN=abc\x1b[3", "TOKEN=******"),
    ("https://u:pa\x1b[5@ss@host/", "https://u:*****@**@host/"),
])
def test_the_csi_sequences_inside_a_masked_value_are_kept(stored: str, expected: str) -> None:
    assert mask_secrets(stored) == expected


def test_an_osc_string_inside_a_masked_value_is_masked_with_it() -> None:
    # An OSC string carries text (a title, a link's address) that may be the secret itself.
    stored = f"TOKEN=ab{LINK_ON}cd{LINK_OFF}\n"
    assert mask_secrets(stored) == f"TOKEN={_masked(f'ab{LINK_ON}cd{LINK_OFF}')}\n"


def test_a_secret_on_a_line_after_an_unterminated_osc_string_is_masked() -> None:
    # The page ends an OSC string that is never terminated at the end of its line and shows
    # the lines after it (web/ansi.js), so masking must read them too.
    stored = f"\x1b]0;no terminator\nkey {AWS_KEY_ID[:4]}\x1b[m{AWS_KEY_ID[4:]}\n"
    assert mask_secrets(stored) == (f"\x1b]0;no terminator\nkey AKIA\x1b[m"
                                    f"{_masked(AWS_KEY_ID[4:])}\n")
    assert mask_secrets(f"\x9d0;8-bit\n{GITHUB[:4]}\x1b[1m{GITHUB[4:]}") == (
        f"\x9d0;8-bit\nghp_\x1b[1m{_masked(GITHUB[4:])}")


def test_a_token_in_backspace_overstrike_is_masked_in_both_characters_of_each_cell() -> None:
    # What `man` and `groff -Tascii` print for bold (c\bc) and for underlined text (_\bc).
    bold = "".join(f"{character}\b{character}" for character in GITHUB)
    underlined = "".join(f"_\b{character}" for character in GITHUB)
    prefix_bold = "g\bgh\bhp\bp_\b_"
    prefix_underlined = "_\bg_\bh_\bp_\b_"
    assert mask_secrets(f"x: {bold}\n") == f"x: {prefix_bold}" + "*\b*" * 36 + "\n"
    assert mask_secrets(f"x: {underlined}\n") == f"x: {prefix_underlined}" + "*\b*" * 36 + "\n"


def test_every_character_of_an_overstrike_chain_is_masked() -> None:
    # Each cell is written three times over (`#`, then `_`, then the token's character).
    cells = "".join(f"#\b_\b{character}" for character in GITHUB)
    masked = mask_secrets(f"x: {cells}\n")
    assert masked == "x: " + "".join(f"#\b_\b{c}" for c in GITHUB[:4]) + "*\b*\b*" * 36 + "\n"


@pytest.mark.parametrize(("run", "secret", "masked_secret"), [
    # Each of these made one search cost the square of the line's length (ADR 0141): every
    # word start in the run began a scheme, and every link of the chain copied those before.
    ("a." * 40_000, "://deploy:hunter2pass@host", "://deploy:***********@host"),
    ("a\b" * 40_000, "TOKEN=s3cr3t", "TOKEN=******"),
    # The env-style line's value ended lazily, so each blank of the run read the blanks after
    # it again; and each `-eyJ` of a run began a JWT whose body read the rest of the run.
    ("", "TOKEN=s3cr3t" + " \t" * 40_000 + "x", "TOKEN=******" + " \t" * 40_000 + "*"),
    ("-eyJ" * 20_000, f" {JWT}", f" eyJ{_masked(JWT[3:])}"),
    ("*eyJ" * 20_000, f" {JWT}", f" eyJ{_masked(JWT[3:])}"),
    # An assignment's blanks handed back one at a time to a value that could not end at the
    # `\r` (ADR 0145): the line holds no value to mask.
    ("TOKEN=" + " " * 80_000 + "\rx", "\nTOKEN=s3cr3t\r\n", "\nTOKEN=******\r\n"),
])
def test_long_hostile_lines_are_masked(run: str, secret: str, masked_secret: str) -> None:
    assert mask_secrets(run + secret) == run + masked_secret


def test_a_long_value_coloured_character_by_character_is_masked_round_its_colours() -> None:
    # Only the shown text holds the assignment, so the mask is carved round 32,000 codes.
    value = "".join(f"\x1b[1m{character}\x1b[m" for character in "s3cr3t" * 2_000)
    stored = f"{MATCH_ON}TOKEN{MATCH_OFF}={value}\n"
    assert mask_secrets(stored) == f"{MATCH_ON}TOKEN{MATCH_OFF}=" + "\x1b[1m*\x1b[m" * 12_000 + "\n"


def test_a_backspace_at_a_line_end_or_before_a_control_overstrikes_nothing() -> None:
    shown = shown_text("ab\b\ncd\b\x1b[mx")
    assert shown is not None
    assert shown.text == "ab\ncx"


def test_the_shown_text_maps_back_to_the_stored_characters() -> None:
    # The last sequence was cut short: the page shows nothing of it, parameters included.
    stored = f"a{MATCH_ON}bc{MATCH_OFF}d\x1b[1"
    shown = shown_text(stored)
    assert shown is not None
    assert shown.text == "abcd"
    whole = shown.stored_span((0, 4))
    assert whole == (0, len(stored) - 3)
    assert [stored[start:end] for start, end in shown.unhidden([whole])] == ["a", "bc", "d"]
    assert [stored[start:end] for start, end in shown.unhidden([shown.stored_span((2, 3))])] \
        == ["c"]
    assert shown_text("plain\ttext\r\nwith a tab and a carriage return") is None


def test_a_shown_span_reaches_back_over_what_its_first_character_was_written_over() -> None:
    stored = "x #\b_\bgh"
    shown = shown_text(stored)
    assert shown is not None
    assert shown.text == "x gh"
    assert shown.stored_span((2, 4)) == (2, len(stored))
    assert [stored[start:end] for start, end in shown.unhidden([(2, len(stored))])] == [
        "#", "_", "gh"]
    # From the middle of a stretch, nothing before it was written over.
    assert shown.stored_span((3, 4)) == (len(stored) - 1, len(stored))


# A short plain line leaves the hinted lines dense enough to search the text whole; a long
# one makes each run of neighbouring hinted lines a stretch of its own.
@pytest.mark.parametrize("plain", ["plain line", "plain line " * 200])
def test_neighbouring_lines_of_assignments_are_each_masked(plain: str) -> None:
    lines = [f"API_KEY=k{number}" for number in range(3)]
    text = "\n".join([*lines, plain, *lines, ""])
    masked = [f"API_KEY={_masked(f'k{number}')}" for number in range(3)]
    assert mask_secrets(text) == "\n".join([*masked, plain, *masked, ""])


def test_a_split_token_at_the_end_of_coloured_output_is_masked() -> None:
    stored = f"pushing with {MATCH_ON}{GITHUB[:20]}{MATCH_OFF}"
    assert mask_secrets(stored) == f"pushing with {MATCH_ON}ghp_{'*' * 16}{MATCH_OFF}"


def test_spans_are_sorted_and_merged() -> None:
    text = f"TOKEN={GITHUB} and {AWS_KEY_ID}"
    spans = secret_spans(text)
    assert spans == sorted(spans)
    assert all(end < start for (_, end), (start, _) in itertools.pairwise(spans))


def test_masking_json_leaves_keys_and_other_values() -> None:
    value = {"PASSWORD": "x", "data": [f"PASSWORD={'p' * 4}", 3, None, {"t": GITLAB}]}
    assert mask_json(value) == {"PASSWORD": "x", "data": ["PASSWORD=****", 3, None,
                                                         {"t": "glpat-" + "*" * 20}]}


def test_masking_off_changes_nothing() -> None:
    output = ShellOutput(exit_code=0, stdout=f"PASSWORD=x {GITHUB}", stderr=None)
    assert NO_MASKING.output(output) is output
    assert NO_MASKING.text(GITHUB) == GITHUB
    masked = Masking().output(output)
    assert masked.stdout == f"PASSWORD=* {'*' * 40}"
    assert masked.stderr is None


def test_a_record_is_masked_in_every_text_field() -> None:
    record = ShellRecord(is_shell=True, command=f"GH_TOKEN={GITHUB} gh pr list",
                         work_dir="/repo", title=f"GH_TOKEN={GITHUB} gh pr list",
                         description=None, status="complete", result="success",
                         output=ShellOutput(0, f"{SLACK}\n", "", False))
    masked = Masking().record(record)
    assert GITHUB not in f"{masked.command}{masked.title}"
    assert masked.output.stdout == f"xoxb-{_masked(SLACK[5:])}\n"
    assert (masked.work_dir, masked.description) == ("/repo", None)


@pytest.mark.parametrize(("value", "expected"), [
    ("", True), ("on", True), ("1", True), ("TRUE", True), ("off", False), ("0", False),
])
def test_the_setting_is_an_on_off_switch(value: str, expected: bool) -> None:
    settings = Settings.from_env({"SHELLEXEC_MASK_SECRETS": value,
                                  "SHELLEXEC_MASK_AT_REST": value or "off"})
    assert settings.mask_secrets is expected
    assert settings.mask_at_rest is (expected and value != "")


def test_a_setting_that_is_neither_on_nor_off_is_refused() -> None:
    with pytest.raises(ValueError, match="SHELLEXEC_MASK_SECRETS must be `on` or `off`"):
        Settings.from_env({"SHELLEXEC_MASK_SECRETS": "maybe"})


def test_the_short_text_check_covers_every_hint() -> None:
    hints = {hint.lower() for pattern in PATTERNS for hint in pattern.hints}
    assert [hint for hint in hints if not any(short in hint for short in SHORT_HINTS)] == []

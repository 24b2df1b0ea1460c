"""Masking's view of what the page shows (`shown_text`) against the page itself (web/ansi.js,
run in Node). Where the two disagree, a secret split by an escape sequence can show in clear:
the page showed `AKIA` + `ESC TAB` + the rest as `AKIAIOSF...` (it swallowed the tab with the
ESC) while masking kept the tab and found no key (ADR 0126).

Texts are drawn at random from pieces of escape sequences, controls and text, without what
only the page models (carriage returns, backspaces, erases `K` and column moves `G`); the
shown texts must be equal."""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path

from shellexec.projection.secrets import mask_secrets
from shellexec.projection.shown import shown_text

ANSI = Path(__file__).resolve().parents[2] / "web" / "ansi.js"
PAGE_SHOWS = f"""
import {{ parseAnsi, plainText }} from {json.dumps(ANSI.as_uri())};
let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(JSON.parse(input).map((text) => plainText(parseAnsi(text)))));
"""

PIECES = [
    "a", "Z", "A", "1", "8", "0", ";", ":", "?", "-", " ", "/", ".", "(", "~", "@", "m", "P",
    "X", "^", "_", "[", "]", "\\", "\t", "\n", "é", "中", "\x1b", "\x1b", "\x1b[", "\x1b]",
    "\x07", "\x9b", "\x9d", "\x9c", "\x90", "\x98", "\x00", "\x7f", "\x85", "\x18",
]
# Credentials split by an escape the page once read otherwise than masking (assembled from
# parts so that no scanner mistakes this file for a leak).
SPLIT_SECRETS = [
    "AKIA" + "\x1b\tIOSFODNN7EXAMPLE",
    "ghp_" + "\x1bé" + "A" * 36,
    "AKIA" + "\x1b\x1bPQRSTUVWXYZ23456",
    "AKIA" + "\x1b[-1234567890ABCDEF",
    "AKIA" + "\x1b[38;2;9;-1;0m" + "IOSFODNN7EXAMPLE",
    "\x1b]0;title\n" + "ghp_" + "\x1b[1m" + "R2d2C3p0L1ghtS4b3rXw1ngY0d4H4nS0L0Ch",
]
PROBES = [
    *SPLIT_SECRETS,
    "\x1b[38;2;999;-1;0mx",
    "\x1b]0;no terminator\nnext",
    "\x1b]0;title\x1b[31mred",
    "cut\x1b[1",
    "cut\x1b(",
]


def page_shows(texts: list[str]) -> list[str]:
    result = subprocess.run(["node", "--input-type=module", "-e", PAGE_SHOWS],
                            input=json.dumps(texts), capture_output=True, text=True, check=True,
                            timeout=120)
    shown: list[str] = json.loads(result.stdout)
    return shown


def masking_sees(text: str) -> str:
    shown = shown_text(text)
    return text if shown is None else shown.text


def test_masking_sees_the_text_the_page_shows() -> None:
    rng = random.Random(20261205)
    texts = PROBES + ["".join(rng.choices(PIECES, k=rng.randint(1, 12))) for _ in range(20_000)]
    disagreements = [(text, page, masking_sees(text))
                     for text, page in zip(texts, page_shows(texts), strict=True)
                     if page != masking_sees(text)]
    assert disagreements[:10] == [], f"{len(disagreements)} texts shown differently"


# The whole credentials above, as the page would show them in clear.
WHOLE_SECRET = re.compile(r"AKIA[A-Z0-9]{16}|ghp_[A-Za-z0-9]{36}")


def test_what_the_page_shows_of_masked_output_holds_no_whole_secret() -> None:
    masked = [mask_secrets(text) for text in SPLIT_SECRETS]
    for text, shown in zip(SPLIT_SECRETS, page_shows(masked), strict=True):
        assert not WHOLE_SECRET.search(shown), (text, shown)

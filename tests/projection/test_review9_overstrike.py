"""Review 9: masking models backspace as invisible, while the page (web/ansi.js) steps back a
column on it and lets the next character overwrite the previous one. nroff's overstrike (what
`man`, `groff -Tascii`, `ul` and `less -U` output print for bold and underlined text: `c\\bc`,
`_\\bc`) therefore splits every character of a token for the patterns, and the page joins it
back into the token in clear."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from shellexec.projection.secrets import mask_secrets

GITHUB = "ghp_" + "R2d2C3p0L1ghtS4b3rXw1ngY0d4H4nS0L0Ch"


def bold(text: str) -> str:
    return "".join(f"{character}\b{character}" for character in text)


def underlined(text: str) -> str:
    return "".join(f"_\b{character}" for character in text)


@pytest.mark.parametrize("overstruck", [bold, underlined], ids=["bold", "underlined"])
def test_a_token_printed_with_nroff_overstrike_is_masked(overstruck: Callable[[str], str]) -> None:
    stored = f"GH_TOKEN example: {overstruck(GITHUB)}\n"
    masked = mask_secrets(stored)
    # What the page shows of the token after the prefix: each overstruck pair is one cell.
    shown_secret = [masked[index] for index, character in enumerate(stored)
                    if character in GITHUB[4:] and (index + 1 >= len(stored)
                                                    or stored[index + 1] != "\b")]
    assert "*" in shown_secret, "the page shows the whole token in clear"

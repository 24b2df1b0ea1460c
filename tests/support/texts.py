"""Texts for tests that need stored output to take room: packing (ADR 0150) deflates
repetitive output to almost nothing, so "y" * 200_000 no longer fills 200 pages."""

from __future__ import annotations

import random
import string

_PRINTABLE = string.digits + string.ascii_letters + string.punctuation + " "


def random_text(size: int, seed: int = 0) -> str:
    """`size` characters of printable ASCII drawn at random (the same for the same seed):
    deflate keeps about 83 % of their bytes, as of any text with no repetition to use."""
    return "".join(random.Random(seed).choices(_PRINTABLE, k=size))

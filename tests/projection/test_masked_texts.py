"""Texts that were costly to mask are masked once while kept (ADR 0147)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from shellexec.normalize import ShellOutput
from shellexec.projection import MaskedTexts, Masking
from shellexec.projection.masked_texts import ENTRY_OVERHEAD_BYTES
from shellexec.projection.secrets import mask_secrets

COSTLY = "\x1b[32mTOKEN\x1b[0m=abcdef \x1b[1mvalue\x1b[0m\n"


class CostingMask:
    """`mask_secrets`, counted, on a CPU clock that each masking advances by the cost its
    text is given (texts with "TOKEN" cost 50 ms, others 1 ms)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def __call__(self, text: str, *, head_cut: bool = False, open_end: bool = True) -> str:
        self.calls.append((text, head_cut))
        self.now += 0.05 if "TOKEN" in text else 0.001
        return mask_secrets(text, head_cut=head_cut, open_end=open_end)


def kept_texts(mask: CostingMask, max_bytes: int = 1 << 20) -> MaskedTexts:
    return MaskedTexts(max_bytes=max_bytes, cpu_clock=mask.clock, mask=mask)


def test_a_costly_text_is_masked_once_and_served_the_same() -> None:
    mask = CostingMask()
    kept = kept_texts(mask)
    text = COSTLY * 100
    first = kept.masked(text)
    again = kept.masked("".join([COSTLY] * 100))  # another object, the same text
    assert first == again == mask_secrets(text)
    assert "abcdef" not in again
    assert len(mask.calls) == 1


def test_a_cheap_text_is_masked_every_time() -> None:
    mask = CostingMask()
    kept = kept_texts(mask)
    text = "compiling src/main.c\n" * 100
    assert kept.masked(text) == kept.masked(text) == text
    assert len(mask.calls) == 2
    assert kept.held_bytes == 0


def test_a_cut_head_is_a_different_masking() -> None:
    mask = CostingMask()
    kept = kept_texts(mask)
    text = "abcdefghijklmnopqrstuvwxyz0123456789 " + COSTLY
    whole, cut = kept.masked(text), kept.masked(text, head_cut=True)
    assert whole.startswith("abcdefghij")
    assert cut == mask_secrets(text, head_cut=True) != whole
    assert kept.masked(text, head_cut=True) == cut
    assert mask.calls == [(text, False), (text, True)]


def test_a_closed_end_is_a_different_masking() -> None:
    """A finished output's end is no token still arriving: kept apart from a running one's,
    a read of one must not be served the other's masking."""
    mask = CostingMask()
    kept = kept_texts(mask)
    text = COSTLY + "pip install sk-learn-extra"
    growing, finished = kept.masked(text), kept.masked(text, open_end=False)
    assert growing.endswith("sk-***********")
    assert finished.endswith("sk-learn-extra")
    assert kept.masked(text) == growing
    assert len(mask.calls) == 2


def test_the_least_recently_read_texts_go_first_past_the_bound() -> None:
    mask = CostingMask()
    texts = [f"{n} {COSTLY * 50}" for n in range(4)]
    masked_weight = ENTRY_OVERHEAD_BYTES + 2 * sys.getsizeof(texts[0])
    kept = kept_texts(mask, max_bytes=3 * masked_weight)
    for text in texts[:3]:
        kept.masked(text)
    kept.masked(texts[0])  # read again: now the most recent
    kept.masked(texts[3])  # pushes out texts[1], the least recently read
    assert kept.held_bytes <= 3 * masked_weight
    mask.calls.clear()
    for text in (texts[0], texts[2], texts[3]):
        kept.masked(text)
    assert mask.calls == []
    kept.masked(texts[1])
    assert mask.calls == [(texts[1], False)]


def test_a_text_masked_to_itself_is_held_once() -> None:
    mask = CostingMask()
    kept = kept_texts(mask)
    text = "TOKEN: nothing secret here\n" * 100
    assert kept.masked(text) == text
    assert kept.held_bytes == ENTRY_OVERHEAD_BYTES + sys.getsizeof(text)


def test_a_text_that_is_not_ascii_is_weighed_with_its_utf8_copy() -> None:
    # CPython keeps a UTF-8 copy on a text once it is encoded, as protobuf encodes what is sent.
    mask = CostingMask()
    kept = kept_texts(mask)
    text = "TOKEN: 東京 ü\n" * 100
    assert kept.masked(text) == text
    assert kept.held_bytes == (ENTRY_OVERHEAD_BYTES + sys.getsizeof(text)
                               + len(text.encode("utf-8")))


def test_a_text_larger_than_the_bound_is_not_kept() -> None:
    mask = CostingMask()
    kept = kept_texts(mask, max_bytes=1000)
    text = COSTLY * 100
    assert kept.masked(text) == kept.masked(text) == mask_secrets(text)
    assert kept.held_bytes == 0
    assert len(mask.calls) == 2


def test_readers_on_many_threads_are_each_served_their_own_text() -> None:
    mask = CostingMask()
    kept = kept_texts(mask, max_bytes=64 * 1024)
    texts = [f"DB_{n}_TOKEN=secret{n} {COSTLY * 20}" for n in range(40)]
    with ThreadPoolExecutor(8) as threads:
        served = list(threads.map(kept.masked, texts * 5))
    assert served == [mask_secrets(text) for text in texts] * 5
    assert kept.held_bytes <= 64 * 1024


def test_masking_with_kept_texts_masks_as_without() -> None:
    mask = CostingMask()
    masking = Masking(kept=kept_texts(mask))
    output = ShellOutput(stdout=COSTLY * 10, stderr="GITHUB_TOKEN=ghp_" + "a" * 36)
    assert masking.output(output) == Masking().output(output)
    assert masking.text(COSTLY) == Masking().text(COSTLY)
    assert Masking(enabled=False, kept=kept_texts(mask)).text(COSTLY) == COSTLY

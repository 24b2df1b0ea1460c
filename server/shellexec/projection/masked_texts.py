"""Texts that were costly to mask, kept masked, so that reading them again costs nothing.

Masking is linear, but some text costs far more per byte than other text: 256 KiB of log lines
masks in about 5 ms, the same size of `TOKEN=abc` lines in colour codes in about 80 ms (a
control character after every character of a secret, about 0.2 s: ADR 0142). The same texts
are read again and again: every watcher of a session projects each event's message, a reader
pages back and forth, several clients read one page. Six clients reading 4.5 MB pages of such
text kept the reader threads busy for seconds, which delayed another client's feed events by
as long (ADR 0147).

Only texts whose masking took this thread at least `costly_seconds` of CPU are kept: plain
output stays out, so the cache holds what it saves most on, and its bytes are not counted
against the server's memory bound by output that was cheap anyway. The key is the text
itself, so a hit is the same text, whoever stored it and whatever row it came from.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from shellexec.projection.secrets import mask_secrets

# Masking that took at least this much of a thread's CPU time is worth keeping.
COSTLY_SECONDS = 0.01

# The bytes the kept texts may hold, original and masked: about sixty 256 KiB outputs.
MAX_BYTES = 16 * 1024 * 1024

# What an entry is counted as beyond its texts (the key, the dictionary's slot).
ENTRY_OVERHEAD_BYTES = 256

Key = tuple[bool, bool, str]  # head_cut, open_end, the text


class MaskedTexts:
    """A thread-safe LRU of masked texts, weighed by the memory of both texts (a text masked
    to itself is held once)."""

    def __init__(self, *, max_bytes: int = MAX_BYTES, costly_seconds: float = COSTLY_SECONDS,
                 cpu_clock: Callable[[], float] = time.thread_time,
                 mask: Callable[..., str] = mask_secrets) -> None:
        self._max_bytes = max_bytes
        self._costly_seconds = costly_seconds
        self._cpu_clock = cpu_clock
        self._mask = mask
        self._bytes = 0
        self._entries: OrderedDict[Key, tuple[str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def masked(self, text: str, *, head_cut: bool = False, open_end: bool = True) -> str:
        """`mask_secrets(text, head_cut=head_cut, open_end=open_end)`, kept if it was
        costly."""
        key = (head_cut, open_end, text)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry[0]
        started = self._cpu_clock()
        masked = self._mask(text, head_cut=head_cut, open_end=open_end)
        if self._cpu_clock() - started >= self._costly_seconds:
            self._keep(key, text if masked == text else masked)
        return masked

    @property
    def held_bytes(self) -> int:
        with self._lock:
            return self._bytes

    def _keep(self, key: Key, masked: str) -> None:
        text = key[2]
        weight = ENTRY_OVERHEAD_BYTES + _memory(text) + (0 if masked is text else _memory(masked))
        if weight > self._max_bytes:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (masked, weight)
            self._bytes += weight
            while self._bytes > self._max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped


def _memory(text: str) -> int:
    """What `text` may come to hold: its own size, and for text that is not ASCII the UTF-8
    copy CPython attaches to it once it is encoded (as protobuf does when the text is sent),
    which tripled what a text of Latin-1 or CJK characters held."""
    size = sys.getsizeof(text)
    return size if text.isascii() else size + len(text.encode("utf-8", "surrogatepass"))


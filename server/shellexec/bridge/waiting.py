"""Waits that say when they last: the user hears what the bridge waits for, and how to end it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def noticing(call: Awaitable[T], after: float, notice: Callable[[], None]) -> T:
    """`call`'s answer; `notice()` once, if `after` seconds pass without it (the wait goes on).
    Cancelling this cancels `call`."""
    answer = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({answer}, timeout=after)
        if not done:
            notice()
        return await answer
    finally:
        answer.cancel()  # when this was cancelled meanwhile; nothing once answered

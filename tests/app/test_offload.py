"""The conversion pool when a worker dies (api/offload.py, ADR 0045): the request runs again in
new workers, and a request that breaks those too is UNAVAILABLE. It never runs on the event
loop, where a request that kills its worker would hold every caller."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from app.dying_work import die_in_a_worker, die_the_first_time, wait_for_file

from shellexec.api.offload import Offload
from shellexec.service import UnavailableError


def test_a_request_whose_worker_died_runs_again_in_a_new_one(tmp_path: Path) -> None:
    offload = Offload(workers=1, inline_below=0)
    raw = str(tmp_path / "died-once").encode()
    try:
        assert asyncio.run(offload.run(die_the_first_time, raw)) == raw
    finally:
        offload.close()


def test_a_request_that_kills_its_workers_twice_is_unavailable_and_never_runs_inline() -> None:
    offload = Offload(workers=1, inline_below=0)
    try:
        with pytest.raises(UnavailableError, match="conversion workers stopped twice"):
            asyncio.run(offload.run(die_in_a_worker, b"x"))
    finally:
        offload.close()


def test_a_cancelled_call_holds_its_turn_until_its_worker_is_done(tmp_path: Path) -> None:
    """A cancelled call cannot stop its worker: its turn came back at once, and a caller
    cancelling each of its calls had the workers to itself while the turns counted none."""
    offload = Offload(workers=1, inline_below=0)
    go = tmp_path / "go"

    async def check() -> None:
        held = asyncio.ensure_future(offload.run(wait_for_file, str(go).encode(), "a"))
        while offload._turns.holders == 0:
            await asyncio.sleep(0.01)
        held.cancel()
        with pytest.raises(asyncio.CancelledError):
            await held
        assert offload._turns.holders == 1  # the worker still runs it
        other = asyncio.ensure_future(offload.run(wait_for_file, str(go).encode(), "b"))
        await asyncio.sleep(0)
        assert offload._turns.waiting() == 1
        go.touch()
        assert await asyncio.wait_for(other, 60) == str(go).encode()
        assert offload._turns.holders == 0

    try:
        asyncio.run(check())
    finally:
        offload.close()

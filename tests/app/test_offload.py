"""The conversion pool when a worker dies (api/offload.py, ADR 0045): the request runs again in
new workers, and a request that breaks those too is UNAVAILABLE. It never runs on the event
loop, where a request that kills its worker would hold every caller."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from app.dying_work import die_in_a_worker, die_the_first_time

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

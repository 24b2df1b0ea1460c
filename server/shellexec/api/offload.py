"""Running a request's CPU-heavy work off the event loop once the request is large.

Converting a large request (protobuf parse, `google.protobuf.Value` to Python, a fold) takes
hundreds of milliseconds of pure Python; on the event loop, or in a thread that shares the
interpreter lock with it, that is latency for every other caller. Requests of at least
`inline_below` bytes run in a pool of worker processes instead; smaller ones, which are most
and cost microseconds, run inline because a round trip to a worker would cost more than the
work (ADR 0045). The workers take callers' requests in turn (`caller_turns`): one caller's
burst of large requests does not hold another's for the whole burst.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import resource_tracker
from typing import Any, TypeVar

from shellexec import child_lifetime
from shellexec.api.caller_turns import CallerTurns
from shellexec.api.request_work import Missing, Refused
from shellexec.service import InvalidArgumentError, NotFoundError, UnavailableError

T = TypeVar("T")

_log = logging.getLogger(__name__)

def _follow_server(server_pid: int) -> None:
    """A worker's initializer: the worker ends when the server does, and only then.

    A server killed by a signal (the out-of-memory killer) closes nothing, and a worker
    blocked on its call queue would otherwise run on, orphaned, beside the server started in
    its place. A terminal's Ctrl-C signals the whole process group, the workers too: the
    server stops them as it stops, so a worker that took the signal itself would only print
    its KeyboardInterrupt's traceback over the server's last lines. A closed terminal's
    SIGHUP, too, is for the server to act on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    child_lifetime.follow_parent(server_pid, signal.SIGKILL)


def _start_resource_tracker() -> None:
    """Starts multiprocessing's resource tracker, a child of the server that the pool needs,
    with SIGHUP ignored (a disposition a child keeps). It ignores SIGINT and SIGTERM itself,
    but a closed terminal's SIGHUP killed it, and the pool's clean-up then printed a traceback
    per semaphore it could no longer unregister."""
    if threading.current_thread() is not threading.main_thread():
        resource_tracker.ensure_running()  # only the main thread may set a disposition
        return
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, previous)


# About 5,000 JSON values at most: a few milliseconds of conversion, the most a request may
# hold the event loop for.
INLINE_BELOW_BYTES = 16 * 1024


class Offload:
    """Runs request work inline when small, in `workers` processes when large (0: always
    inline). Workers start with the first large request; when one dies, the requests it held
    run again in new workers, and one that breaks those too is UNAVAILABLE."""

    def __init__(self, workers: int, inline_below: int = INLINE_BELOW_BYTES) -> None:
        self._workers = workers
        self._inline_below = inline_below
        self._pool: ProcessPoolExecutor | None = None
        # One request per worker at a time: the pool's own line is first come, first served.
        self._turns = CallerTurns(max(workers, 1))

    async def run(self, work: Callable[[bytes], T | Refused | Missing], raw: bytes,
                  caller: str = "") -> T:
        """`work(raw)`'s value; raises InvalidArgumentError (NotFoundError) when it refuses
        the request (names an id that cannot exist). `caller` (a token's name) is whose turn
        it takes at the workers."""
        if self._workers == 0 or len(raw) < self._inline_below:
            outcome = work(raw)
        else:
            await self._turns.take(caller)
            # The slot comes back when the worker is done, not when the call is: a cancelled
            # call cannot stop the work a worker has begun, and a caller cancelling each of
            # its calls at once would otherwise have the workers to itself, uncounted.
            job = asyncio.ensure_future(self._in_pool(work, raw))
            job.add_done_callback(self._job_done)
            outcome = await asyncio.shield(job)
        if isinstance(outcome, Refused):
            raise InvalidArgumentError(outcome.field, outcome.reason)
        if isinstance(outcome, Missing):
            raise NotFoundError(outcome.resource, outcome.identifier, outcome.resource_type)
        return outcome

    def _job_done(self, job: asyncio.Future[Any]) -> None:
        self._turns.give_back()
        if not job.cancelled():
            job.exception()  # retrieved: a job whose call was cancelled has no one to raise to

    async def _in_pool(self, work: Callable[[bytes], T | Refused | Missing],
                       raw: bytes) -> T | Refused | Missing:
        # A worker died: killed (the out-of-memory killer picks the largest process, maybe
        # for another request's sake), or unable to start (the code on disk changed under a
        # running server). The request runs once more in new workers; never on the event
        # loop, where a request that kills its worker would hold every caller.
        for _ in range(2):
            pool = self._started()
            try:
                return await asyncio.get_running_loop().run_in_executor(pool, work, raw)
            except BrokenProcessPool:
                self._discard(pool)
        raise UnavailableError("the server's conversion workers stopped twice while "
                               "converting this request; retry shortly")

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        if self._pool is pool:
            self._pool = None
            _log.warning("a conversion worker died; new workers take its requests")
        pool.shutdown(wait=False, cancel_futures=True)

    def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            _start_resource_tracker()
            # Spawned, not forked: a forked child of a gRPC server inherits its threads' locks.
            self._pool = ProcessPoolExecutor(
                self._workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_follow_server, initargs=(os.getpid(),))
        return self._pool

    def close(self) -> None:
        """Stops the workers; work still queued is dropped (the server is stopping)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

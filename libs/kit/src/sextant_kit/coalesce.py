"""Concurrent callers of one refresh share its runs, never a stale one (admission's catch-up).

`Coalesced(run)` is called like `run()`. Each call returns once a run of `run` that **started
after the call** has finished (its exception, if it failed, is raised to every caller of that
run). Callers arriving while a run is in flight do not start their own: they all join the next
run, which starts when the one in flight ends. So N concurrent calls cost at most two runs
instead of N, and each caller still sees everything that was committed before it called — what
`run()` on its own would give it.

Used for the admission API's catch-up with the log: every request folds the log before it reads
the state (quota, idempotent replays); at 50 submissions/s the requests overlap, and each used to
read and decode the same new rows (docs/platform/throughput.md, "Third round").
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Coalesced:
    """`await coalesced()`: the module's contract. One event loop; not reentrant (`run` must not
    call the coalesced function itself)."""

    def __init__(self, run: Callable[[], Awaitable[object]]) -> None:
        self._run = run
        self._next: asyncio.Future[None] | None = None  # the run arriving callers join (not started)
        self._flying = asyncio.Lock()  # one run at a time
        self._tasks: set[asyncio.Task[None]] = set()
        self.runs = 0  # runs started (tests, stats)

    async def __call__(self) -> None:
        fut = self._next
        if fut is None:
            fut = self._next = asyncio.get_running_loop().create_future()
            fut.add_done_callback(_retrieve)
            task = asyncio.ensure_future(self._fly(fut))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        await asyncio.shield(fut)  # a cancelled caller does not cancel the others' run

    async def _fly(self, fut: asyncio.Future[None]) -> None:
        try:
            async with self._flying:
                if self._next is fut:
                    self._next = None  # from here on, a caller may have missed this run's read: next run
                self.runs += 1
                await self._run()
        except asyncio.CancelledError:  # shutting down: the callers of this run are cancelled too
            if self._next is fut:
                self._next = None
            fut.cancel()
            raise
        except Exception as exc:  # handed to every caller of this run
            if not fut.done():
                fut.set_exception(exc)
        else:
            if not fut.done():
                fut.set_result(None)


def _retrieve(fut: asyncio.Future[None]) -> None:
    """Mark a failed run's exception as retrieved (its callers may all have been cancelled)."""
    if not fut.cancelled():
        fut.exception()

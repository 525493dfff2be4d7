"""`coalesce.Coalesced`: concurrent callers share runs, and each waits for a run that started after it."""

from __future__ import annotations

import asyncio

import pytest
from sextant_kit.coalesce import Coalesced


class Log:
    """A log whose head moves; `read` copies the head into `seen` after yielding (a slow query)."""

    def __init__(self) -> None:
        self.head = 0
        self.seen = 0
        self.reads = 0
        self.fail = False

    async def read(self) -> None:
        self.reads += 1
        head = self.head  # what the read sees is what was committed when it started
        await asyncio.sleep(0.01)
        if self.fail:
            raise RuntimeError("database down")
        self.seen = max(self.seen, head)


def test_concurrent_callers_share_runs_and_each_sees_what_was_committed_before_it() -> None:
    async def main() -> tuple[int, int, list[bool]]:
        log = Log()
        refresh = Coalesced(log.read)

        async def caller(i: int) -> bool:
            await asyncio.sleep(0.001 * (i % 7))
            log.head += 1  # something committed right before this caller asks
            committed = log.head
            await refresh()
            return log.seen >= committed

        fresh = await asyncio.gather(*(caller(i) for i in range(50)))
        return log.reads, refresh.runs, list(fresh)

    reads, runs, fresh = asyncio.run(main())
    assert all(fresh)  # nobody got a state older than what was committed before its call
    assert reads == runs < 50  # 50 overlapping callers share a few runs


def test_callers_of_one_loop_turn_share_one_run() -> None:
    async def main() -> tuple[int, int]:
        log = Log()
        refresh = Coalesced(log.read)

        async def caller() -> None:
            log.head += 1
            await refresh()

        await asyncio.gather(*(caller() for _ in range(20)))
        return log.seen, refresh.runs

    assert asyncio.run(main()) == (20, 1)


def test_a_caller_arriving_during_a_run_waits_for_the_next_one() -> None:
    async def main() -> tuple[int, int]:
        log = Log()
        refresh = Coalesced(log.read)
        first = asyncio.ensure_future(refresh())
        await asyncio.sleep(0.003)  # the first run is reading
        log.head = 7
        await refresh()
        await first
        return log.seen, refresh.runs

    seen, runs = asyncio.run(main())
    assert (seen, runs) == (7, 2)


def test_a_failed_run_raises_to_its_callers_and_the_next_call_runs_again() -> None:
    async def main() -> tuple[list[object], int]:
        log = Log()
        log.fail = True
        refresh = Coalesced(log.read)
        results = await asyncio.gather(refresh(), refresh(), return_exceptions=True)
        log.fail = False
        await refresh()
        return results, refresh.runs

    results, runs = asyncio.run(main())
    assert all(isinstance(r, RuntimeError) for r in results)
    assert runs == 2


def test_a_cancelled_caller_does_not_cancel_the_run_of_the_others() -> None:
    async def main() -> int:
        log = Log()
        log.head = 3
        refresh = Coalesced(log.read)
        a = asyncio.ensure_future(refresh())
        b = asyncio.ensure_future(refresh())
        await asyncio.sleep(0.002)
        a.cancel()
        await b
        with pytest.raises(asyncio.CancelledError):
            await a
        return log.seen

    assert asyncio.run(main()) == 3

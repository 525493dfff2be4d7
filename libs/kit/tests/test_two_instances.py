"""Two instances of a deciding service (docs/platform/instances.md): two planning processes, each
with its own decider and consumer loop, one consumer group and one log, in memory.

The partitions of the group are split between them (two topics stand for two partitions here);
after a rebalance the second instance is also redelivered an admission the first one already
placed. Both decide on the same state — a barrier holds each append until the other has decided —
so the later append is refused (the log head moved under it): it re-reads the log and decides
again. The log must then hold exactly one placement decision per admission and no server may
ever hold more than its capacity. Without head-conditional appends, the 4-core server would be
given four 2-core workloads."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import pytest
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.state import EMPTY, evolve
from sextant_core.testing.builders import record, server, submitted
from sextant_core.workflow import Decider
from sextant_kit.bus import MemoryBus
from sextant_kit.consumer import ConsumerLoop, RetryPolicy
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.runtime import DeciderHandler

FAST = RetryPolicy(handler_attempts=2, initial_backoff=0.0, max_backoff=0.0)
WORKLOADS = ("w1", "w2", "w3")


class RacingStore(MemoryEventStore):
    """The memory store whose first append of each of `writers` waits until every one of them
    has decided (so they all decided on the same log head)."""

    def __init__(self, writers: int) -> None:
        super().__init__(topic_of=lambda s: None)
        self.waiting = writers
        self.all_decided = asyncio.Event()
        self.raced = False

    async def _barrier(self) -> None:
        if self.raced:
            return
        self.waiting -= 1
        if self.waiting == 0:
            self.raced = True
            self.all_decided.set()
        else:
            await self.all_decided.wait()

    async def append_and_track(self, consumer: str, *args: Any, **kw: Any) -> Any:
        if consumer == "planning":
            await self._barrier()
        return await super().append_and_track(consumer, *args, **kw)

    async def append_and_track_many(self, *args: Any, **kw: Any) -> Any:
        await self._barrier()
        return await super().append_and_track_many(*args, **kw)


async def two_planners(batch: bool) -> tuple[list[Envelope], list[ConsumerLoop]]:
    store = RacingStore(writers=2)
    setup: list[ev.Event] = [server("s0", cores=4)]  # room for two of the three 2-core sizings
    for w in WORKLOADS:  # sized two cores each by planning here (see test_consumer_batch.planning_log)
        setup += [submitted(w, cores=2, memory_gb=1.0, fast_path=True),
                  ev.WorkloadClassified(at=2.0, workload_id=w, decision=record(1))]
    await store.append_and_track("edge", "setup", None, [
        Envelope.wrap(e, id=f"setup-{i}", source="edge", stream_version=0, time=e.at) for i, e in enumerate(setup)])
    bus = MemoryBus({"part-a": 1, "part-b": 1, "dlq": 1})
    admitted = {}
    for w in WORKLOADS:
        env = Envelope.wrap(ev.WorkloadAdmitted(at=3.0, workload_id=w, decision=record(2), arq_class=0),
                            id=f"admit-{w}", source="admission", stream_version=0, time=3.0)
        (admitted[w],) = await store.append(env.stream, None, [env])
    for topic, ws in (("part-a", ("w1", "w2")), ("part-b", ("w3", "w1"))):  # w1 again: a redelivery
        for w in ws:
            await bus.publish(topic, *admitted[w].to_kafka())
    loops = []
    for topic in ("part-a", "part-b"):
        handler = DeciderHandler("planning", Decider("planning", policy_set("sextant-adaptive")), store)
        await handler.start()
        loops.append(ConsumerLoop(name="planning", source=bus.source("planning", [topic]), store=store,
                                  handler=handler, reacts=handler.reacts, dead_letters=bus, dead_letter_topic="dlq",
                                  retry=FAST, fetch_timeout=0.0, clock=lambda: 42.0, track_empty=False,
                                  batch_appends=batch))

    async def drain(loop: ConsumerLoop) -> None:
        while await loop.run_once():
            pass

    await asyncio.gather(*(drain(loop) for loop in loops))
    assert store.raced, "the two planners did not decide on the same head"
    return await store.read_all(0, 10_000), loops


@pytest.mark.parametrize("batch", [True, False], ids=["batched", "one-by-one"])
async def test_two_planners_decide_each_admission_once_and_never_over_commit(batch: bool) -> None:
    log, loops = await two_planners(batch)
    caused = collections.Counter(e.causation_id for e in log if e.type in ("PlacementDecided", "PlacementDeferred"))
    assert dict(caused) == {f"admit-{w}": 1 for w in WORKLOADS}
    placed = [e for e in log if e.type == "PlacementDecided"]
    assert len(placed) == 2, [e.payload for e in placed]  # the server has room for two of the three
    ids = [e.payload["decision"]["decision_id"] for e in log if e.type.startswith("Placement")]
    assert len(ids) == len(set(ids)) == len(WORKLOADS)
    state = EMPTY
    for env in log:
        state = evolve(state, env.event(), env.position)
        s0 = state.servers.get("s0")
        assert s0 is None or s0.used_cores <= s0.capacity.cores, f"over-committed at {env.position}"
    assert state.servers["s0"].used_cores == 4
    if batch:  # the loser's batch was refused; decided again after a catch-up, where the
        # redelivered w1 decides nothing (it is placed) and w2 is decided on the winner's outputs
        assert sum(loop.stats.batch_fallbacks for loop in loops) == 1
        assert sum(loop.stats.processed for loop in loops) == 4
    else:  # the winner (w3) catches up before its next decision (w1 again: placed after w3), so it
        # is not refused; the loser's w1, decided on the old head, is refused as tracked (skipped),
        # and its w2 is decided after a catch-up, on both placements (deferred: no room left).
        # Before, the winner's w1 was decided on the state without its own w3 and refused.
        assert sum(loop.stats.head_retries for loop in loops) == 0
        assert sum(loop.stats.skipped for loop in loops) == 1
        assert [e.type for e in log if e.causation_id == "admit-w2"] == ["PlacementDeferred"]

"""`DeciderHandler`: when it reads the log, and records no reaction can follow from."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.testing import builders
from sextant_core.workflow import Decider
from sextant_kit.runtime import DeciderHandler


class CountingStore:
    """read_all over a fixed log, counting the reads."""

    def __init__(self, log: Sequence[Envelope]) -> None:
        self.log = list(log)
        self.reads = 0

    async def read_all(self, after: int, limit: int = 1000) -> list[Envelope]:
        self.reads += 1
        return [e for e in self.log if e.position is not None and e.position > after][:limit]


def env(event: ev.Event, position: int) -> Envelope:
    return Envelope.wrap(event, id=f"e{position}", source="test", stream_version=position,
                         time=event.at).with_position(position)


def test_records_without_a_reaction_skip_the_log_and_reacting_ones_catch_up() -> None:
    submitted = builders.submitted("w1", at=1.0)
    sample = ev.ProfileSampleRecorded(at=2.0, workload_id="w1", run_id="r1", classification="scale_up",
                                      column="c1", value=1.0)
    log = [env(submitted, 1), env(sample, 2)]
    store = CountingStore(log)
    decider = Decider("profiling", policy_set("foundation"))
    handler = DeciderHandler("profiling", decider, store)  # type: ignore[arg-type]

    skipped = asyncio.run(handler(log[1]))
    assert skipped.items == () and store.reads == 0 and decider.position == 0

    planned = asyncio.run(handler(log[0]))  # a submission reacts: the handler folds the log first
    assert store.reads >= 1 and decider.position == 2
    assert [type(e).__name__ for e in planned.items] == ["ProfilingPlanned"]
    assert planned.expected_head == 2


def test_a_catch_up_ends_at_a_short_read() -> None:
    """A read with fewer rows than asked for reached the head: no last, empty read. A full read
    reads on; every position is folded either way."""
    sample = ev.ProfileSampleRecorded(at=2.0, workload_id="w1", run_id="r1", classification="scale_up",
                                      column="c1", value=1.0)
    log = [env(builders.submitted("w1", at=1.0), 1), *(env(sample, p) for p in range(2, 8))]
    for read_batch, reads in ((10, 1), (3, 3), (7, 2)):  # 7 rows: 10 → 1 read; 3 → 3+3+1; 7 → 7, then empty
        store = CountingStore(log)
        decider = Decider("profiling", policy_set("foundation"))
        handler = DeciderHandler("profiling", decider, store, read_batch=read_batch)  # type: ignore[arg-type]
        assert asyncio.run(handler.catch_up()) == 7
        assert (store.reads, decider.position) == (reads, 7), read_batch


def test_the_decider_knows_which_types_react() -> None:
    decider = Decider("planning", policy_set("foundation"))
    sample = ev.ProfileSampleRecorded(at=2.0, workload_id="w1", run_id="r1", classification="scale_up",
                                      column="c1", value=1.0)
    started = ev.WorkloadCompleted(at=2.0, workload_id="w1")
    assert decider.reacts(env(sample, 1)) is False
    assert decider.reacts(env(started, 2)) is True


def test_a_fold_failure_is_log_unfoldable_and_keeps_the_state() -> None:
    from sextant_kit.errors import LogUnfoldable, is_transient

    started = ev.WorkloadStarted(at=2.0, workload_id="w9", allocation=builders.alloc(("s1", 1, 1.0)))
    store = CountingStore([env(started, 1)])  # a start of a workload the log never submitted
    decider = Decider("planning", policy_set("foundation"))
    handler = DeciderHandler("planning", decider, store)  # type: ignore[arg-type]
    try:
        asyncio.run(handler.catch_up())
    except LogUnfoldable as exc:
        assert is_transient(exc) and "folding after position 0" in str(exc)
    else:
        raise AssertionError("the fold failure was not raised")
    assert decider.position == 0


def test_a_snapshot_behind_the_shared_decider_is_not_restored() -> None:
    """Admission's API and front door catch the decider up too. If one of them is reading the log
    after position 2 while the decider task restores a snapshot at position 1, moving the state back
    would make that read fold position 3 onto position 1: event 2 lost for good."""
    import pickle

    from sextant_core.state import fold
    from sextant_kit.ports import Snapshot
    from sextant_kit.runtime import SNAPSHOT_SCHEMA

    log = [env(builders.submitted(f"w{i}", at=float(i)), i) for i in (1, 2, 3)]

    class SlowStore(CountingStore):
        async def read_all(self, after: int, limit: int = 1000) -> list[Envelope]:
            await asyncio.sleep(0.05)
            return await super().read_all(after, limit)

    class Snapshots:
        async def load_snapshot(self, key: str, code_version: str, schema_version: int) -> Snapshot:
            await asyncio.sleep(0.01)
            return Snapshot(key=key, code_version=code_version, schema_version=SNAPSHOT_SCHEMA, position=1,
                            blob=pickle.dumps(fold(log[:1])))

    async def scenario() -> Decider:
        decider = Decider("admission", policy_set("foundation"))
        decider.fold(log[:2])  # the API caught up first
        store = SlowStore(log)
        handler = DeciderHandler("admission", decider, store, snapshots=Snapshots())  # type: ignore[arg-type]

        async def api_catch_up() -> None:
            decider.fold(await store.read_all(decider.position))  # in flight across the restore

        await asyncio.gather(api_catch_up(), handler.start())
        return decider

    decider = asyncio.run(scenario())
    assert decider.position == 3 and decider.state == fold(log)
    assert sorted(decider.state.workloads) == ["w1", "w2", "w3"]

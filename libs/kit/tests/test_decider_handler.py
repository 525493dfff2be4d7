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

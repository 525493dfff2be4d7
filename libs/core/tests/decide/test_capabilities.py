"""Optional policy capabilities (policies.py): declared by subclassing a Protocol, asked by type.

`decide` calls a capability only when the policy has it; a declared capability whose method is
misspelt cannot even be instantiated (the Protocol's methods are abstract), so it cannot silently
switch a feature off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.context import DecisionContext
from sextant_core.decide import decide
from sextant_core.policies import (
    ObservationAssessor,
    PlacementOutcome,
    ProbeAssessor,
    RetryHint,
    TaskAssessor,
)
from sextant_core.profiles import policy_set
from sextant_core.state import ClusterState, WorkloadState, fold
from sextant_core.testing.builders import alloc, record, server, submitted, through_placement

POLICY = policy_set("foundation")


def running() -> ClusterState:
    a = alloc(("s1", 2, 2.0))
    return fold([server("s1"), submitted("w1", cores=2, fast_path=True), *through_placement("w1", a),
                 ev.WorkloadStarted(at=3, workload_id="w1", allocation=a)])


def reclassify(w: WorkloadState, ctx: DecisionContext, reason: str) -> ev.Event:
    return ev.ReclassificationRequested(at=ctx.at, workload_id=w.workload_id,
                                        decision=ctx.record("reprovisioning", w.workload_id), reason=reason)


class ProbesOnly(ProbeAssessor):
    """Reviews nothing, assesses probes only."""

    def review(self, state: ClusterState, w: WorkloadState, reason: str, ctx: DecisionContext) -> Sequence[ev.Event]:
        return ()

    def assess_probe(self, state: ClusterState, w: WorkloadState, c: cmd.AssessProbe,
                     ctx: DecisionContext) -> Sequence[ev.Event]:
        return (reclassify(w, ctx, f"probe {c.probe_id}"),)


ASSESS = {
    "observation": cmd.AssessObservation(workload_id="w1", value=1.0, ratio_to_target=0.5),
    "probe": cmd.AssessProbe(workload_id="w1", probe_id="p1"),
    "tasks": cmd.AssessTasks(workload_id="w1"),
}


@pytest.mark.parametrize(("kind", "decided"), [("observation", False), ("probe", True), ("tasks", False)],
                         ids=["observation-not-declared", "probe-declared", "tasks-not-declared"])
def test_each_monitoring_input_goes_to_its_assessor_only(kind: str, decided: bool) -> None:
    params = replace(POLICY, reprovisioner=ProbesOnly())
    d = decide(running(), ASSESS[kind], params=params, seed=1, at=5.0)
    assert [type(e).__name__ for e in d.events] == (["ReclassificationRequested"] if decided else [])


def test_the_foundation_reprovisioner_assesses_nothing() -> None:
    for c in ASSESS.values():
        assert decide(running(), c, params=POLICY, seed=1, at=5.0).events == ()


class Counting(RetryHint):
    """A planner whose hint says no, counting how often it is searched."""

    def __init__(self) -> None:
        self.searched = 0

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        self.searched += 1
        return PlacementOutcome(allocation=None, reasons=("no_capacity",))

    def could_use(self, state: ClusterState, w: WorkloadState, freed: tuple[str, ...]) -> bool:
        return False


class NoHint:
    """The same planner without the capability."""

    def __init__(self) -> None:
        self.searched = 0

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        self.searched += 1
        return PlacementOutcome(allocation=None, reasons=("no_capacity",))


def test_the_retry_hint_is_asked_only_of_a_planner_that_has_it() -> None:
    st = fold([server("s1", cores=2), submitted("big", cores=8, fast_path=True)])
    st = fold([ev.WorkloadClassified(at=2, workload_id="big", decision=record(1)),
               ev.WorkloadAdmitted(at=2, workload_id="big", decision=record(2), arq_class=0),
               ev.PlacementDeferred(at=2, workload_id="big", decision=record(3), reasons=("no_capacity",))], st)
    retry = cmd.PlaceWorkload(workload_id="big", reason="capacity_freed", freed=("s1",))
    hinted, plain = Counting(), NoHint()
    d = decide(st, retry, params=replace(POLICY, planner=hinted), seed=1, at=5.0)
    assert d.detail == {"still_deferred": "no freed server fits it"} and hinted.searched == 0
    decide(st, retry, params=replace(POLICY, planner=plain), seed=1, at=5.0)
    assert plain.searched == 1


def test_a_misspelt_capability_cannot_be_instantiated() -> None:
    class Misspelt(RetryHint):
        def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
            return PlacementOutcome(allocation=None)

        def could_uses(self, state: ClusterState, w: WorkloadState, freed: tuple[str, ...]) -> bool:
            return True

    with pytest.raises(TypeError, match="could_use"):
        Misspelt()  # type: ignore[abstract]


@pytest.mark.parametrize("proto", [ObservationAssessor, ProbeAssessor, TaskAssessor], ids=lambda p: p.__name__)
def test_the_shipped_adaptive_reprovisioner_declares_every_assessor(proto: type) -> None:
    from sextant_core.reprovisioning.adaptive import Adaptive

    assert proto in Adaptive.__mro__ and isinstance(Adaptive(), proto)

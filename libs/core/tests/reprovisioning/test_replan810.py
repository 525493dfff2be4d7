"""Ladder 8.10 (docs/adaptation/phases.md, "Ladder 8.10"): adaptation that is never worse than
doing nothing — the re-plan after a reclassification keeps the workload where it runs unless the
move is predicted better (`Adaptive.replan`, `replan_min_gain`), and batch migrations and in-place
scale-ups need a predicted gain beyond the classification's error (`migrate_min_gain`,
`scale_up_min_gain`). Each test is a crafted state where ladders 8.8 and 8.10 decide differently."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import (
    Allocation,
    DecisionTrace,
    InstructionRateTarget,
    TwinWorkloadRef,
    WorkloadKind,
)
from sextant_core.context import DecisionContext
from sextant_core.decide import decide
from sextant_core.policies import PlacementOutcome, PolicySet
from sextant_core.profiles import policy_set
from sextant_core.reprovisioning.adaptive import LADDERS, VERSION, Adaptive
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.state import fold
from sextant_core.state.model import ClusterState, WorkloadState
from sextant_core.testing.builders import alloc, record, server

OLD, NEW = LADDERS["8.8"], LADDERS["8.10"]
# platform A is the fast one; B runs this workload at 0.8 of A, C at 1.5 of A (its classification)
HET = {"A": 1.0e9, "B": 0.8e9, "C": 1.5e9}
UP = {"c1": 1.0e9, "c2": 1.9e9, "c4": 3.5e9, "c8": 6.0e9}


class Proposes:
    """A planner that proposes one fixed outcome (the profile's planner stands behind it)."""

    def __init__(self, allocation: Allocation | None) -> None:
        self.allocation = allocation

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        if self.allocation is None:
            return PlacementOutcome(allocation=None, reasons=("no_capacity",), trace=DecisionTrace(examined=1))
        return PlacementOutcome(allocation=self.allocation, predicted_performance=1.0, trace=DecisionTrace(examined=1))


def profile(p: AdaptationParams, proposal: Allocation | None) -> PolicySet:
    base = policy_set("foundation")
    planner = Proposes(proposal)
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    return PolicySet(**{**fields, "planner": planner, "reprovisioner": Adaptive(planner=planner, params=p)})


def running(wid: str, a: Allocation, *, up: dict[str, float] | None = None, het: dict[str, float] | None = None,
            ips: float = 2.0e9) -> list[ev.Event]:
    return [
        ev.WorkloadSubmitted(at=2.0, workload_id=wid, tenant="t", kind=WorkloadKind.BATCH,
                             target=InstructionRateTarget(ips=ips), spec=TwinWorkloadRef(ref=wid), fast_path=True),
        ev.WorkloadClassified(at=2.0, workload_id=wid, decision=record(1), scale_up=up or UP,
                              heterogeneity=het or HET, tolerated={"memory_bw": 50.0}, caused={"memory_bw": 10.0}),
        ev.WorkloadAdmitted(at=2.0, workload_id=wid, decision=record(2), arq_class=0),
        ev.PlacementDecided(at=2.0, workload_id=wid, decision=record(3), allocation=a),
        ev.WorkloadStarted(at=2.0, workload_id=wid, allocation=a),
    ]


def reclassified(wid: str, at: float = 600.0, het: dict[str, float] | None = None) -> list[ev.Event]:
    """Its reclassification in place (a phase change): the rows are the same, the request is at `at`."""
    return [ev.ReclassificationRequested(at=at, workload_id=wid, decision=record(4), reason="reactive step"),
            ev.WorkloadClassified(at=at + 30.0, workload_id=wid, decision=record(5), scale_up=UP,
                                  heterogeneity=het or HET,
                                  tolerated={"memory_bw": 40.0}, caused={"memory_bw": 12.0}, reclassification=True)]


def cluster() -> list[ev.Event]:
    return [server("a1", platform="A"), server("b1", platform="B"), server("c1", platform="C")]


def replan(st: ClusterState, p: AdaptationParams, proposal: Allocation | None) -> tuple[ev.Event, ...]:
    c = cmd.PlaceWorkload(workload_id="w", reason="reclassified")
    return decide(st, c, params=profile(p, proposal), seed=1, at=630.0).events


def state(a: Allocation, **kw: Any) -> ClusterState:
    return fold([*cluster(), *running("w", a, **kw), *reclassified("w")])


def test_version_and_older_ladders() -> None:
    assert VERSION == "8.16" and LADDERS["8.10"] == NEW
    assert LADDERS["8.14"] == replace(NEW, straggler_any_task=True, straggler_likelihood_nats=0.0, batch_move_below=0.8)
    assert LADDERS[VERSION] == replace(LADDERS["8.14"], neighbour_gate=None, split_reports=True, step_attribution=1.0,
                                       attribution_wait=True)
    assert OLD.replan_min_gain is None and OLD.migrate_min_gain == 0.0 and OLD.scale_up_min_gain == 0.01
    assert NEW.replan_min_gain == 0.05 and NEW.migrate_min_gain == 0.25 and NEW.scale_up_min_gain == 0.10


def test_a_replan_onto_a_slower_platform_is_refused() -> None:
    # 8.8 follows the planner to B (predicted 0.8 of staying); 8.10 keeps it on A
    st = state(alloc(("a1", 2, 4.0)))
    (old,) = replan(st, OLD, alloc(("b1", 2, 4.0)))
    assert isinstance(old, ev.PlacementDecided) and old.allocation.servers == ("b1",)
    (new,) = replan(st, NEW, alloc(("b1", 2, 4.0)))
    assert isinstance(new, ev.PlacementDecided) and new.allocation == st.workloads["w"].allocation


def test_a_replan_that_gains_enough_moves() -> None:
    # C is predicted 1.5x faster for the rest of the run: the move repays its copy, both ladders move
    st = state(alloc(("a1", 2, 4.0)))
    for p in (OLD, NEW):
        (e,) = replan(st, p, alloc(("c1", 2, 4.0)))
        assert isinstance(e, ev.PlacementDecided) and e.allocation.servers == ("c1",)


def test_a_small_predicted_gain_does_not_move() -> None:
    # a platform only 3 % faster by the classification: within its error, 8.10 stays
    het = {"A": 1.0e9, "B": 0.8e9, "C": 1.03e9}
    st = fold([*cluster(), *running("w", alloc(("a1", 2, 4.0)), het=het), *reclassified("w", het=het)])
    (old,) = replan(st, OLD, alloc(("c1", 2, 4.0)))
    (new,) = replan(st, NEW, alloc(("c1", 2, 4.0)))
    assert isinstance(old, ev.PlacementDecided) and old.allocation.servers == ("c1",)
    assert isinstance(new, ev.PlacementDecided) and new.allocation.servers == ("a1",)


def test_staying_is_valued_at_what_it_measures() -> None:
    # w runs on A (estimate 1.9e9 / 2e9 = 0.95) and measures 0.55 there, a heavy neighbour: a move
    # to the other A server is predicted no faster by the classification, but much faster than
    # staying measures; without the observation 8.10 keeps it
    quiet = state(alloc(("a1", 2, 4.0)))
    loud = fold([*cluster(), server("a2", platform="A"), *running("w", alloc(("a1", 2, 4.0))),
                 ev.PerformanceObserved(at=540.0, workload_id="w", value=1.1e9, ratio_to_target=0.55),
                 *reclassified("w")])
    (kept,) = replan(fold([server("a2", platform="A")], quiet), NEW, alloc(("a2", 2, 4.0)))
    assert isinstance(kept, ev.PlacementDecided) and kept.allocation.servers == ("a1",)
    (moved,) = replan(loud, NEW, alloc(("a2", 2, 4.0)))
    assert isinstance(moved, ev.PlacementDecided) and moved.allocation.servers == ("a2",)
    # a measurement at the estimate changes nothing: still kept
    calm = fold([*cluster(), server("a2", platform="A"), *running("w", alloc(("a1", 2, 4.0))),
                 ev.PerformanceObserved(at=540.0, workload_id="w", value=1.9e9, ratio_to_target=0.95),
                 *reclassified("w")])
    (stay,) = replan(calm, NEW, alloc(("a2", 2, 4.0)))
    assert isinstance(stay, ev.PlacementDecided) and stay.allocation.servers == ("a1",)


def test_in_place_a_replan_may_grow_but_not_shrink() -> None:
    st = state(alloc(("a1", 2, 4.0)))
    (old,) = replan(st, OLD, alloc(("a1", 1, 4.0)))
    (new,) = replan(st, NEW, alloc(("a1", 1, 4.0)))
    assert isinstance(old, ev.PlacementDecided) and old.allocation.assignments[0].cores == 1
    assert isinstance(new, ev.PlacementDecided) and new.allocation.assignments[0].cores == 2
    (grown,) = replan(st, NEW, alloc(("a1", 4, 4.0)))
    assert isinstance(grown, ev.PlacementDecided) and grown.allocation.assignments[0].cores == 4


def test_no_proposal_keeps_it_running_instead_of_deferring_it() -> None:
    st = state(alloc(("a1", 2, 4.0)))
    (old,) = replan(st, OLD, None)
    (new,) = replan(st, NEW, None)
    assert isinstance(old, ev.PlacementDeferred)  # the twin pauses a deferred workload
    assert isinstance(new, ev.PlacementDecided) and new.allocation.servers == ("a1",)


def test_other_replans_are_the_planners() -> None:
    # a target update is no reclassification: 8.10 takes the planner's proposal as it is
    st = state(alloc(("a1", 2, 4.0)))
    c = cmd.PlaceWorkload(workload_id="w", reason="target_updated")
    (e,) = decide(st, c, params=profile(NEW, alloc(("b1", 2, 4.0))), seed=1, at=630.0).events
    assert isinstance(e, ev.PlacementDecided) and e.allocation.servers == ("b1",)


def observe(st: ClusterState, p: AdaptationParams, proposal: Allocation | None, ratio: float) -> tuple[ev.Event, ...]:
    """The ladder's answer to one observation (the in-place baseline probe 8.6 adds is left out)."""
    c = cmd.AssessObservation(workload_id="w", value=0.0, ratio_to_target=ratio)
    return tuple(e for e in decide(st, c, params=profile(p, proposal), seed=1, at=3000.0).events
                 if not isinstance(e, ev.ProbeRequested))


def test_an_in_place_scale_up_needs_a_predicted_gain_of_ten_percent() -> None:
    # 1 → 8 cores is predicted 5 % faster (a nearly flat curve, as a single-threaded workload's)
    flat = {"c1": 1.0e9, "c2": 1.02e9, "c4": 1.04e9, "c8": 1.05e9}
    st = fold([*cluster(), *running("w", alloc(("a1", 1, 4.0)), up=flat)])
    (old,) = observe(st, OLD, None, ratio=0.5)
    assert isinstance(old, ev.AllocationAdjusted) and old.action == "scale_up"
    assert observe(st, NEW, None, ratio=0.5) == ()
    # a steep curve still grows under 8.10
    st = fold([*cluster(), *running("w", alloc(("a1", 1, 4.0)))])
    (new,) = observe(st, NEW, None, ratio=0.5)
    assert isinstance(new, ev.AllocationAdjusted) and new.action == "scale_up"


def test_a_batch_migration_needs_the_minimum_gain() -> None:
    # A is full (no in-place growth): 8.8 migrates to C for a 3 % predicted gain, 8.10 does not
    het = {"A": 1.0e9, "B": 0.8e9, "C": 1.03e9}
    st = fold([*cluster(), *running("w", alloc(("a1", 8, 4.0)), het=het, ips=8.0e9)])
    (old,) = observe(st, OLD, alloc(("c1", 8, 4.0)), ratio=0.7)
    assert isinstance(old, ev.MigrationDecided) and old.allocation.servers == ("c1",)
    assert observe(st, NEW, alloc(("c1", 8, 4.0)), ratio=0.7) == ()


# --- ladder 8.13 (`batch_move_below`): a batch workload is moved only off a measured shortfall ---------

NEXT = LADDERS["8.13"]


def test_ladder_813_is_810_plus_the_move_condition() -> None:
    assert replace(NEW, batch_move_below=0.8) == NEXT and not NEXT.neighbour_reclass_reset
    assert NEW.batch_move_below is None and OLD.batch_move_below is None
    # 8.13 runs by name (bench/adaptation.py --ladder 8.13); the default (8.16) includes its rule
    cur = policy_set("sextant-adaptive")
    named = policy_set(f"sextant-adaptive@{cur.version.partition('+')[0]}+8.13")
    assert cur.version.endswith("+8.16") and isinstance(named.reprovisioner, Adaptive)
    assert cur.reprovisioner.params.batch_move_below == NEXT.batch_move_below
    assert named.reprovisioner.params == NEXT


def placed(st: ClusterState, p: AdaptationParams, proposal: Allocation) -> tuple[str, ...]:
    """The servers of the re-plan's decision (a `PlacementDecided`)."""
    (e,) = replan(st, p, proposal)
    assert isinstance(e, ev.PlacementDecided)
    return e.allocation.servers


def measuring(ratio: float) -> ClusterState:
    """w on A (estimate 1.9e9 / 2e9 = 0.95) measuring `ratio` there, then reclassified."""
    return fold([*cluster(), *running("w", alloc(("a1", 2, 4.0))),
                 ev.PerformanceObserved(at=540.0, workload_id="w", value=ratio * 2.0e9, ratio_to_target=ratio),
                 *reclassified("w")])


def test_813_keeps_a_batch_workload_that_measures_its_estimate_where_it_runs() -> None:
    # C is predicted 1.5x faster: 8.10 moves it there; 8.13 keeps it, since on A it measures its
    # estimate (0.95) — nothing the estimate leaves out is slowing it down where it runs
    assert placed(measuring(0.95), NEW, alloc(("c1", 2, 4.0))) == ("c1",)
    assert placed(measuring(0.95), NEXT, alloc(("c1", 2, 4.0))) == ("a1",)
    # measuring 0.55 of the goal (0.58 of the estimate, below 0.8): 8.13 follows the planner to C
    assert placed(measuring(0.55), NEXT, alloc(("c1", 2, 4.0))) == ("c1",)


def test_813_still_grows_in_place_after_a_reclassification() -> None:
    (grown,) = replan(state(alloc(("a1", 2, 4.0))), NEXT, alloc(("a1", 4, 4.0)))
    assert isinstance(grown, ev.PlacementDecided) and grown.allocation.assignments[0].cores == 4


def test_813_migrate_rung_no_longer_moves_a_batch_workload() -> None:
    # A is full: 8.10 migrates to C (predicted 1.5x); 8.13 does not while w measures its estimate
    st = fold([*cluster(), *running("w", alloc(("a1", 8, 4.0)), ips=8.0e9)])
    (old,) = observe(st, NEW, alloc(("c1", 8, 4.0)), ratio=0.7)
    assert isinstance(old, ev.MigrationDecided) and old.allocation.servers == ("c1",)
    assert observe(st, NEXT, alloc(("c1", 8, 4.0)), ratio=0.7) == ()
    # the rung runs only within `estimate_margin` (15 %) of the estimate, so a batch workload it
    # sees measures ≥ 0.85 of it: under 8.13 (0.8) the rung no longer moves batch workloads
    seen = fold([*cluster(), *running("w", alloc(("a1", 8, 4.0)), ips=8.0e9),
                 ev.PerformanceObserved(at=2400.0, workload_id="w", value=5.2e9, ratio_to_target=0.65)])
    assert observe(seen, NEXT, alloc(("c1", 8, 4.0)), ratio=0.65) == ()
    (old,) = observe(seen, NEW, alloc(("c1", 8, 4.0)), ratio=0.65)
    assert isinstance(old, ev.MigrationDecided)

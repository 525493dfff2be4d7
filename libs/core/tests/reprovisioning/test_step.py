"""The reactive step detector: a workload's measured baseline and a step against it —
table tests showing the arithmetic, and the `Adaptive` decisions it drives over a folded log."""

from __future__ import annotations

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import WorkloadKind
from sextant_core.decide import decide
from sextant_core.policies import PolicySet
from sextant_core.profiles import policy_set
from sextant_core.reprovisioning.adaptive import Adaptive
from sextant_core.reprovisioning.detection import step_change
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.state import fold
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import alloc, record, server
from sextant_core.testing.builders import running as life

Q = (0.0,) * 10  # a quiet neighbourhood: no pressure anywhere
LOUD = (40.0,) + (0.0,) * 9  # a neighbour pressing 40 points on the first source


def obs(*rows: tuple[float, float] | tuple[float, float, tuple[float, ...]]) -> tuple[tuple[float, float, tuple[float, ...]], ...]:
    return tuple((r[0], r[1], r[2] if len(r) > 2 else Q) for r in rows)  # type: ignore[misc]


@pytest.mark.parametrize(("observed", "reset_at", "first", "gate", "relative"), [
    # started at 0; windows (0,300] (300,600]: baseline 1.00 at 300, 0.90 / 1.00 − 1 = −10 % > 5 %
    (obs((300, 1.00), (600, 0.90)), 0.0, 0.0, None, -0.10),
    # +4 %: within the 5 % threshold (telemetry noise is 1 % a window)
    (obs((300, 1.00), (600, 1.04)), 0.0, 0.0, None, None),
    # a recovery is a change too: 0.80 → 0.92 is +15 %
    (obs((300, 0.80), (600, 0.92)), 0.0, 0.0, None, 0.15),
    # one observation: no later one to test
    (obs((300, 1.00),), 0.0, 0.0, None, None),
    # reset (re-placed) at 350: window (300,600] straddles it, so the baseline is 900's 0.50;
    # 0.52 / 0.50 − 1 = +4 %: no step (against 300's 1.00 it would be −48 %)
    (obs((300, 1.00), (600, 0.70), (900, 0.50), (1200, 0.52)), 350.0, 0.0, None, None),
    # ... and 0.45 / 0.50 − 1 = −10 % after it is one
    (obs((300, 1.00), (600, 0.70), (900, 0.50), (1200, 0.45)), 350.0, 0.0, None, -0.10),
    # the first window's start unknown (history truncated): the baseline is the second observation
    (obs((300, 1.00), (600, 0.80), (900, 0.80)), 0.0, None, None, None),
    # gate 15: pressure +40 on a source in window (300,600] is noisy → baseline 900's 0.60
    (obs((300, 1.00), (600, 0.60, LOUD), (900, 0.60, LOUD)), 0.0, 0.0, 15.0, None),
    # gate 50: the same neighbour is below the gate, so 0.60 / 1.00 − 1 = −40 % counts
    (obs((300, 1.00), (600, 0.60, LOUD), (900, 0.60, LOUD)), 0.0, 0.0, 50.0, -0.40),
], ids=["drop-10", "within-noise", "recovery", "single", "straddled-reset", "after-reset",
        "unknown-first-window", "noisy-neighbour", "quiet-neighbour"])
def test_step_change(observed: tuple[tuple[float, float, tuple[float, ...]], ...], reset_at: float,
                     first: float | None, gate: float | None, relative: float | None) -> None:
    s = step_change(observed, reset_at, first, 0.05, gate, Q)
    assert (None if s is None else round(s.relative, 6)) == relative


NOISE = (0.01, 300.0, 3.0)  # 1 % sd for a 300 s window, shrinking as 1/√length; steps beyond 3 sd


@pytest.mark.parametrize(("observed", "relative"), [
    # two 60 s windows: sd of the difference = 1 % · √(300/60 + 300/60) = 3.16 %, 3 sd = 9.5 %:
    # −8 % is above the 5 % floor but within the noise
    (obs((60, 1.00), (120, 0.92)), None),
    # −12 % is a step
    (obs((60, 1.00), (120, 0.88)), -0.12),
    # a baseline of four 60 s windows (mean 1.00, 240 s): 3 · 1 % · √(300/240 + 300/60) = 7.5 % — −8 % counts
    (obs((60, 0.98), (120, 1.02), (180, 1.00), (240, 1.00), (300, 0.92)), -0.08),
    # a 6 s window (split at a neighbour's change) is √50 noisier: 3 · 1 % · √(300/60 + 300/6) = 22 %
    (obs((60, 1.00), (66, 0.85)), None),
], ids=["short-windows-within-noise", "short-windows-step", "long-baseline", "tiny-window"])
def test_noise_aware_step(observed: tuple[tuple[float, float, tuple[float, ...]], ...], relative: float | None) -> None:
    s = step_change(observed, 0.0, 0.0, 0.05, None, Q, NOISE)
    assert (None if s is None else round(s.relative, 6)) == relative


def test_a_harmless_neighbour_keeps_the_baseline() -> None:
    # a neighbour arrives at 120 (pressure +40): the workload's level does not move across it
    # (1.00 → 0.995), so with `effect_z` the baseline stays and the later −12 % counts against it
    rows = obs((60, 1.00), (120, 1.00), (180, 0.995, LOUD), (240, 0.88, LOUD))
    s = step_change(rows, 0.0, 0.0, 0.05, 0.0, Q, NOISE, effect_z=1.5)
    assert s is not None and s.baseline_at == 60 and round(s.relative, 3) == -0.119
    # without it the neighbour's window (120,180] is noisy: the baseline would be 240's, the latest
    # observation itself — no step can be told yet
    assert step_change(rows, 0.0, 0.0, 0.05, 0.0, Q, NOISE) is None
    # ... nor when the level moved across the change (1.00 → 0.80: the neighbour's doing, or not)
    moved = obs((60, 1.00), (120, 1.00), (180, 0.80, LOUD), (240, 0.80, LOUD))
    assert step_change(moved, 0.0, 0.0, 0.05, 0.0, Q, NOISE, effect_z=1.5) is None


# --- over a folded log -----------------------------------------------------------------------------


def policies(**kw: object) -> PolicySet:
    base = policy_set("foundation")
    return PolicySet(**{**{f: getattr(base, f) for f in base.__dataclass_fields__},
                        # ladder 8.5's probing and gate (8.6's are in test_phases86.py)
                        "reprovisioner": Adaptive(params=AdaptationParams(**{"probe_policy": "rotation",
                                                                             "neighbour_tolerated_margin": None,
                                                                             **kw}))})  # type: ignore[arg-type]


def seen(wid: str, at: float, ratio: float) -> ev.PerformanceObserved:
    return ev.PerformanceObserved(at=at, workload_id=wid, value=ratio * 1.0e9, ratio_to_target=ratio)


def assess(st: ClusterState, wid: str, **kw: object) -> tuple[ev.Event, ...]:
    last = st.workloads[wid].observed[-1]
    c = cmd.AssessObservation(workload_id=wid, value=last[1] * 1.0e9, ratio_to_target=last[1])
    return decide(st, c, params=policies(**kw), seed=1, at=last[0]).events


def test_a_step_reclassifies_at_once_even_within_the_gap() -> None:
    # classified at 0, gap 1200 s; baseline 1.90 at 300, 1.60 / 1.90 − 1 = −15.8 % at 600
    st = fold([server("s1"), *life("w", "s1"), seen("w", 300, 1.90), seen("w", 600, 1.60)])
    (req,) = assess(st, "w")
    assert isinstance(req, ev.ReclassificationRequested) and req.reason.startswith("reactive step")
    # after the reclassification (at 630) the old baseline is gone: 1.60 at 900 straddles it
    st = fold([ev.WorkloadClassified(at=630, workload_id="w", decision=record(4), scale_up={"c1": 1.0e9},
                                     heterogeneity={"A": 1.0e9}), seen("w", 900, 1.60)], st)
    assert assess(st, "w") == ()


def test_analytics_jobs_are_not_watched_by_default() -> None:
    # the same −15.8 % step of an analytics job (its telemetry is a projected completion time)
    st = fold([server("s1"), *life("w", "s1", kind=WorkloadKind.ANALYTICS), seen("w", 300, 1.90), seen("w", 600, 1.60)])
    assert not any(isinstance(e, ev.ReclassificationRequested) for e in assess(st, "w"))
    (req,) = assess(st, "w", step_kinds=("batch", "analytics"))
    assert req.reason.startswith("reactive step")


def test_a_loud_new_neighbour_rebaselines_and_a_quiet_one_does_not() -> None:
    # gate 12.5: "n" arrives at 400 on s1 pressing memory_bw by 40 (loud) or 5 (quiet); w drops 1.90 → 1.60
    for caused, expect in ((40.0, ()), (5.0, ("reactive step",))):
        st = fold([server("s1"), *life("w", "s1"), seen("w", 300, 1.90), *life("n", "s1", at=400, caused=caused),
                   seen("w", 600, 1.60)])
        out = assess(st, "w", neighbour_gate=12.5)
        assert tuple(e.reason.split(":")[0] for e in out if isinstance(e, ev.ReclassificationRequested)) == expect, caused


def test_neighbour_gate_none_rebaselines_on_any_resident_change() -> None:
    st = fold([server("s1"), *life("w", "s1"), seen("w", 300, 1.90), *life("n", "s1", at=400, caused=5.0),
               seen("w", 600, 1.60)])
    assert assess(st, "w", neighbour_gate=None) == ()


def test_same_assignment_replacement_leaves_neighbours_baselines() -> None:
    # n is re-placed on s1 with the same cores at 450: nothing changed for w there
    st = fold([server("s1"), *life("n", "s1"), *life("w", "s1", at=10.0), seen("w", 310, 1.90)])
    before = st.servers["s1"].residents_changed_at
    st = fold([ev.PlacementDecided(at=450, workload_id="n", decision=record(5), allocation=alloc(("s1", 2, 4.0)))], st)
    assert st.servers["s1"].residents_changed_at == before == 10.0
    st = fold([ev.PlacementDecided(at=460, workload_id="n", decision=record(6), allocation=alloc(("s1", 1, 4.0)))], st)
    assert st.servers["s1"].residents_changed_at == 460.0


def test_the_default_gate_rebaselines_on_a_quiet_neighbour_too() -> None:
    # gate 0 (default): the 5-point neighbour re-baselines; the next window (600, 900] is the baseline
    st = fold([server("s1"), *life("w", "s1"), seen("w", 300, 1.90), *life("n", "s1", at=400, caused=5.0),
               seen("w", 600, 1.60)])
    assert assess(st, "w") == ()
    st = fold([seen("w", 900, 1.60), seen("w", 1200, 1.30)], st)
    (req,) = assess(st, "w")
    assert isinstance(req, ev.ReclassificationRequested) and "baseline 1.600 (t=900" in req.reason


def test_its_own_reclassification_does_not_move_the_pressure_around_it() -> None:
    st = fold([server("s1"), *life("w", "s1", caused=10.0), seen("w", 300, 1.90)])
    st = fold([ev.WorkloadClassified(at=330, workload_id="w", decision=record(4), scale_up={"c1": 1.0e9},
                                     heterogeneity={"A": 1.0e9}, tolerated={"memory_bw": 50.0},
                                     caused={"memory_bw": 60.0}), seen("w", 600, 1.90)], st)
    assert max(st.servers["s1"].caused_sum) == 60.0  # the server's aggregate follows its new row...
    assert st.workloads["w"].observed[0][2] == st.workloads["w"].observed[1][2] == Q  # ...its neighbours' did not


def test_a_reclassification_rebaselines_from_its_request() -> None:
    # the step is flagged at 600 (request), the new classification lands at 630; window (600, 900]
    # already describes the new phase, so it is the baseline and 1.20 at 1200 is a −25 % step
    st = fold([server("s1"), *life("w", "s1"), seen("w", 300, 1.90), seen("w", 600, 1.60),
               ev.ReclassificationRequested(at=600, workload_id="w", decision=record(4), reason="reactive step"),
               ev.WorkloadClassified(at=630, workload_id="w", decision=record(5), scale_up={"c1": 1.0e9},
                                     heterogeneity={"A": 1.0e9}, tolerated={"memory_bw": 50.0},
                                     caused={"memory_bw": 10.0}),
               seen("w", 900, 1.60)])
    assert st.workloads["w"].classified_from == 600.0
    assert assess(st, "w") == ()  # 1.60 vs 1.60: the old baseline (1.90) is gone
    st = fold([seen("w", 1200, 1.20)], st)
    (req,) = assess(st, "w")
    assert isinstance(req, ev.ReclassificationRequested) and "(t=900" in req.reason


def test_a_replan_onto_the_same_allocation_keeps_the_baseline() -> None:
    a = alloc(("s1", 2, 4.0))
    st = fold([server("s1"), *life("w", "s1"), seen("w", 300, 1.90), seen("w", 600, 1.90),
               ev.PlacementDecided(at=610, workload_id="w", decision=record(6), allocation=a),
               ev.WorkloadStarted(at=610, workload_id="w", allocation=a), seen("w", 900, 1.60)])
    assert st.workloads["w"].allocated_at == 0.0 and st.workloads["w"].started_at == 610.0
    (req,) = assess(st, "w")
    # before the re-plan at 610 counted as a reset, (600, 900] straddling it had no baseline; the
    # first window's start is unknown once `started_at` is the re-start, so the baseline is 600's
    assert isinstance(req, ev.ReclassificationRequested) and "(t=600" in req.reason
    # a real change (fewer cores) does reset: nothing after 620 to compare with yet
    st = fold([ev.PlacementDecided(at=620, workload_id="w", decision=record(7), allocation=alloc(("s1", 1, 4.0))),
               seen("w", 920, 1.20)], st)
    assert st.workloads["w"].allocated_at == 620.0
    assert assess(st, "w") == ()



def test_ladder_813_rebaselines_at_a_neighbours_reclassification() -> None:
    # "n" shares s1 from the start (quiet: no gate); it is reclassified at 750 (its own phase
    # changed), and w drops 1.90 → 1.60 in the window around it: ≤ 8.10 claims w's step,
    # 8.13 (`neighbour_reclass_reset`) re-baselines w there instead
    st = fold([server("s1"), *life("w", "s1"), *life("n", "s1", caused=5.0), seen("w", 300, 1.90),
               seen("w", 600, 1.90),
               ev.ReclassificationRequested(at=750, workload_id="n", decision=record(5), reason="reactive step"),
               seen("w", 900, 1.60)])
    (req,) = assess(st, "w")
    assert isinstance(req, ev.ReclassificationRequested) and req.reason.startswith("reactive step")
    assert assess(st, "w", neighbour_reclass_reset=True) == ()
    # a later step of w itself, against the new baseline, is still claimed
    st = fold([seen("w", 1200, 1.60), seen("w", 1500, 1.30)], st)
    (own,) = assess(st, "w", neighbour_reclass_reset=True)
    assert isinstance(own, ev.ReclassificationRequested) and own.reason.startswith("reactive step")

"""Ladder 8.6 (docs/adaptation/phases.md): in-place probe baselines, the combined multi-source
probe test, the tolerance-aware neighbour gate — table tests of the arithmetic and the `Adaptive`
decisions they drive over crafted folded logs."""

from __future__ import annotations

import math

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import InstructionRateTarget, TwinWorkloadRef, WorkloadKind
from sextant_core.decide import decide
from sextant_core.policies import PolicySet
from sextant_core.profiles import policy_set
from sextant_core.reprovisioning.adaptive import LADDERS, VERSION, Adaptive
from sextant_core.reprovisioning.detection import combined_change, sensitive_sources, step_change
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.state import fold
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import alloc, record, server

MEM = ("memory_cap", "memory_bw", "llc_cap", "llc_bw")  # the default prior's sources


def base(value: float = 50.0) -> dict[str, float]:
    return dict.fromkeys(MEM, value)


# --- the combined test -------------------------------------------------------------------------------


@pytest.mark.parametrize(("baseline", "latest", "z"), [
    # one baseline probe, four sources, sd 7: the mean's sd is 7 · √((1 + 1) / 4) = 4.95 points;
    # −10 points on every source is z −2.02: within 2.5
    ([base()], base(40.0), None),
    # −15 points is z −3.03: a change (the tolerance fell: a heavier phase)
    ([base()], base(35.0), -3.03),
    # +15 is one too (the tolerance came back: the phase ended)
    ([base()], base(65.0), 3.03),
    # three baseline probes: sd 7 · √((1 + 1/3) / 4) = 4.04, −12 is z −2.97
    ([base(), base(), base()], base(38.0), -2.97),
    # one source alone moving −15 averages to −3.75: z −0.76, not a change
    ([base()], {**base(), "memory_cap": 35.0}, None),
    # no baseline: nothing to compare with
    ([], base(0.0), None),
    # only the sources every baseline probe ramped count: memory_cap alone, −30 → z √2·… = −3.03
    ([{"memory_cap": 50.0}], {"memory_cap": 20.0, "llc_bw": 50.0}, -3.03),
], ids=["within", "fell", "rose", "three-baselines", "one-source", "no-baseline", "common-sources"])
def test_combined_change(baseline: list[dict[str, float]], latest: dict[str, float], z: float | None) -> None:
    c = combined_change(baseline, latest, 7.0, 2.5)
    assert (None if c is None else round(c.z, 2)) == z


def test_sensitive_sources_are_the_lowest_tolerated() -> None:
    c = ev.WorkloadClassified(at=0.0, workload_id="w", decision=record(1),
                              tolerated={"l1i": 10.0, "llc_bw": 20.0, "core": 30.0, "tlb": 40.0, "memory_cap": 90.0})
    assert sensitive_sources(c, 3) == ("llc_bw", "l1i", "core")  # in source order
    assert sensitive_sources(None, 2) == ("memory_cap", "memory_bw")  # unknown: ties by source order


# --- the tolerance-aware neighbour gate ----------------------------------------------------------------

Q = (0.0,) * 10
NOISE = (0.01, 300.0, 3.0)
TOL = (60.0,) * 10  # the workload tolerates 60 points on every source


def obs(*rows: tuple[float, float, tuple[float, ...]]) -> tuple[tuple[float, float, tuple[float, ...]], ...]:
    return rows


@pytest.mark.parametrize(("pressure", "margin", "step"), [
    # a neighbour adds 20 points, far below the 60 it tolerates (margin 30: noisy from 30 up):
    # the window stays clean and the −20 % drop after it is a step against the earlier baseline
    ((20.0,) + (0.0,) * 9, 30.0, True),
    # 40 points comes within 30 of 60: noisy, the baseline restarts after it (no step yet)
    ((40.0,) + (0.0,) * 9, 30.0, False),
    # without the tolerance (ladder ≤ 8.5) every move is noisy
    ((20.0,) + (0.0,) * 9, None, False),
], ids=["far-below-tolerance", "near-tolerance", "8.5-any-move"])
def test_the_gate_counts_moves_the_workload_feels(pressure: tuple[float, ...], margin: float | None,
                                                  step: bool) -> None:
    rows = obs((300.0, 1.0, Q), (600.0, 1.0, Q), (900.0, 1.0, pressure), (1200.0, 0.8, pressure))
    tol = (TOL, margin) if margin is not None else None
    s = step_change(rows, 0.0, 0.0, 0.05, 0.0, Q, NOISE, None, tol)
    assert (s is not None) == step
    if s is not None:
        assert math.isclose(s.relative, -0.2, abs_tol=1e-9)


# --- the policy over a folded log -----------------------------------------------------------------------


def policies(p: AdaptationParams | None = None) -> PolicySet:
    b = policy_set("foundation")
    return PolicySet(**{**{f: getattr(b, f) for f in b.__dataclass_fields__}, "reprovisioner": Adaptive(params=p)})


def running(wid: str = "w", at: float = 2.0) -> list[ev.Event]:
    a = alloc(("s1", 2, 4.0))
    return [
        server("s1", cores=8),
        ev.WorkloadSubmitted(at=at, workload_id=wid, tenant="t", kind=WorkloadKind.BATCH,
                             target=InstructionRateTarget(ips=2.0e9), spec=TwinWorkloadRef(ref=wid), fast_path=True),
        ev.WorkloadClassified(at=at, workload_id=wid, decision=record(1), scale_up={"c1": 1e9, "c2": 2e9},
                              heterogeneity={"A": 1.0e9}, tolerated={"memory_bw": 50.0}),
        ev.WorkloadAdmitted(at=at, workload_id=wid, decision=record(2), arq_class=0),
        ev.PlacementDecided(at=at, workload_id=wid, decision=record(3), allocation=a),
        ev.WorkloadStarted(at=at, workload_id=wid, allocation=a),
    ]


def probed(at: float, tol: float, probe_id: str | None = None, purpose: str = "proactive") -> ev.InterferenceProbed:
    return ev.InterferenceProbed(at=at, workload_id="w", probe_id=probe_id or f"p{int(at)}", purpose=purpose,
                                 tolerated=dict.fromkeys(MEM, tol), server_id="s1")


def observe(st: ClusterState, at: float, ratio: float = 1.0) -> tuple[ev.Event, ...]:
    c = cmd.AssessObservation(workload_id="w", value=2.0e9 * ratio, ratio_to_target=ratio)
    return decide(st, c, params=policies(), seed=1, at=at).events


def test_the_state_keeps_proactive_probes_only() -> None:
    st = fold([*running(), probed(100.0, 50.0), probed(200.0, 10.0, purpose="straggler")])
    ((at, pid, sv, tol),) = st.workloads["w"].probed
    assert (at, pid, sv) == (100.0, "p100", "s1") and dict(tol) == base()


def test_the_first_observation_after_a_reset_asks_for_an_in_place_baseline() -> None:
    assert VERSION == "8.16" and LADDERS[VERSION].probe_policy == LADDERS["8.6"].probe_policy == "baseline"
    st = fold(running())
    (req,) = observe(st, 60.0)
    assert isinstance(req, ev.ProbeRequested) and req.purpose == "proactive" and req.server_id == "s1"
    assert req.sources == MEM and req.probe_id == "base-60"
    # once probed in place (after the reset, same server, same sources) nothing more is asked
    assert observe(fold([probed(61.0, 50.0)], st), 120.0) == ()
    # a probe before the latest reset does not count: a re-placement needs a new baseline
    moved = fold([probed(61.0, 50.0), ev.AllocationAdjusted(at=90.0, workload_id="w", decision=record(9),
                                                            action="scale_up", allocation=alloc(("s1", 4, 4.0)),
                                                            reason="test")], st)
    (again,) = observe(moved, 150.0)
    assert isinstance(again, ev.ProbeRequested)


def test_probe_rounds_probe_once_every_interval() -> None:
    st = fold([*running(), probed(61.0, 50.0)])
    review = cmd.ReviewWorkload(workload_id="w", reason="probe_round")
    # 539 s after the baseline: not due (interval 600 s)
    assert decide(st, review, params=policies(), seed=1, at=600.0).events == ()
    (p,) = decide(st, review, params=policies(), seed=1, at=1200.0).events
    assert isinstance(p, ev.ProbeRequested) and p.probe_id == "probe-2" and p.sources == MEM


@pytest.mark.parametrize(("tol", "reclassified"), [(35.0, True), (46.0, False), (66.0, True)],
                         ids=["fell-15", "fell-4", "rose-16"])
def test_a_combined_change_reclassifies_at_once(tol: float, reclassified: bool) -> None:
    later = probed(1200.0, tol, "probe-2")
    st = fold([*running(), probed(61.0, 50.0), later])
    assess = cmd.AssessProbe(workload_id="w", probe_id="probe-2", purpose="proactive", tolerated=later.tolerated,
                             caused={}, server_id="s1")
    out = decide(st, assess, params=policies(), seed=1, at=1200.0).events
    if reclassified:
        (req,) = out
        assert isinstance(req, ev.ReclassificationRequested) and req.reason.startswith("proactive probe probe-2")
        assert "combined tolerated" in req.reason
    else:
        assert out == ()


def test_ladder_8_5_keeps_the_rotation() -> None:
    p = LADDERS["8.5"]
    assert p.probe_policy == "rotation" and p.probe_test == "largest" and p.neighbour_tolerated_margin is None
    st = fold(running())
    c = cmd.AssessObservation(workload_id="w", value=2.0e9, ratio_to_target=1.0)
    assert decide(st, c, params=policies(p), seed=1, at=60.0).events == ()  # no baseline probe

"""Ladder 8.16: a step that a co-resident's own telemetry explains is not claimed
(`step_attribution`, `detection.shift_across`, `Adaptive._explained`)."""

from __future__ import annotations

from dataclasses import replace

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.decide import decide
from sextant_core.policies import PolicySet
from sextant_core.profiles import policy_set
from sextant_core.reprovisioning.adaptive import LADDERS, Adaptive
from sextant_core.reprovisioning.detection import shift_across
from sextant_core.state import fold
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import running, server

Q = (0.0,) * 10


def seen(wid: str, at: float, ratio: float) -> ev.PerformanceObserved:
    return ev.PerformanceObserved(at=at, workload_id=wid, value=ratio * 1.0e9, ratio_to_target=ratio)


def assess(st: ClusterState, ladder: str = "8.16", **changes: object) -> tuple[ev.Event, ...]:
    """w's reclassification requests at its latest observation under `ladder`'s parameters, with
    `changes` replaced."""
    base = policy_set("foundation")
    ps = PolicySet(**{**{f: getattr(base, f) for f in base.__dataclass_fields__},
                      "reprovisioner": Adaptive(params=replace(LADDERS[ladder], **changes))})  # type: ignore[arg-type]
    last = st.workloads["w"].observed[-1]
    c = cmd.AssessObservation(workload_id="w", value=last[1] * 1.0e9, ratio_to_target=last[1])
    return tuple(e for e in decide(st, c, params=ps, seed=1, at=last[0]).events
                 if isinstance(e, ev.ReclassificationRequested))


def test_shift_across_compares_the_windows_after_a_time_with_the_last_one_before() -> None:
    rows = ((60.0, 1.00, Q), (120.0, 1.00, Q), (180.0, 0.70, Q), (240.0, 0.74, Q))
    # before 130: the window ending at 120 (1.00); after: (120,180] and (180,240], mean 0.72
    assert round(shift_across(rows, 130.0) or 0.0, 6) == -0.28
    assert shift_across(rows, 240.0) is None  # no window ends after it
    assert shift_across(rows[:1], 30.0) is None  # the oldest kept window has no known start
    # windows that start before the workload's own reset at 125 are left out: the "before" one too
    assert shift_across(rows, 130.0, since=125.0) is None
    # since 115: (120,180] is the "before" window of 190, (180,240] the "after": 0.74 / 0.70 − 1
    assert round(shift_across(rows, 190.0, since=115.0) or 0.0, 6) == 0.057143


def steps(n_after: float) -> list[ev.Event]:
    # w and n share s1 from the start; n's own level moves 1.00 → n_after in the window (240, 360]
    # that covers the start of w's step window (300, 600] (w: 1.90 → 1.60, −15.8 %); n has
    # reported past 600 when w's window closes
    return [server("s1"), *running("w", "s1", caused=10.0), *running("n", "s1", caused=5.0),
            seen("n", 120, 1.00), seen("n", 240, 1.00), seen("w", 300, 1.90), seen("n", 360, n_after),
            seen("n", 620, n_after), seen("w", 600, 1.60)]


def test_a_step_a_neighbour_moved_more_is_not_claimed() -> None:
    st = fold(steps(0.60))  # n fell by 40 % across w's window start: n changed, w felt it
    (req,) = assess(st, "8.14")
    assert req.reason.startswith("reactive step")  # ≤ 8.14 claims it
    assert assess(st) == ()


def test_a_neighbour_moving_less_or_the_other_way_does_not_explain_it() -> None:
    for n_after in (0.95, 1.40):  # −5 % (less than w's −15.8 %), +40 % (the other way)
        (req,) = assess(fold(steps(n_after)))
        assert req.reason.startswith("reactive step"), n_after


def waiting() -> ClusterState:
    # as `steps`, but n's window holding its own change closes only at 620, after w's at 600
    return fold([server("s1"), *running("w", "s1", caused=10.0), *running("n", "s1", caused=5.0), seen("n", 20, 1.00),
                 seen("w", 300, 1.90), seen("n", 320, 1.00), seen("w", 600, 1.60)])


def test_a_step_waits_for_the_co_residents_reports() -> None:
    st = waiting()
    # n has not reported past 600: its change may be in a window still open — no verdict yet
    assert assess(st) == ()
    (early,) = assess(st, attribution_wait=False)  # without the wait, n shows nothing yet: claimed
    assert early.reason.startswith("reactive step")
    # n reports 0.60 at 620: w's held window (300, 600] is explained at w's next report
    fell = fold([seen("n", 620, 0.60), seen("w", 660, 1.60)], st)
    assert assess(fell) == ()
    # n steady at 620: the held window is claimed at w's next report, against its old baseline
    steady = fold([seen("n", 620, 1.00), seen("w", 660, 1.60)], st)
    (held,) = assess(steady)
    assert "baseline 1.900" in held.reason


def test_ladder_816_is_814_with_the_reactive_rules_only() -> None:
    new = LADDERS["8.16"]
    assert new.step_attribution == 1.0 and new.attribution_wait and new.split_reports and new.neighbour_gate is None
    assert replace(new, step_attribution=None, attribution_wait=False, split_reports=False,
                   neighbour_gate=0.0) == LADDERS["8.14"]
    assert all(LADDERS[v].step_attribution is None and not LADDERS[v].split_reports for v in LADDERS if v != "8.16")


def test_a_window_closed_by_a_newcomers_split_report_is_tested() -> None:
    # w runs alone on s1; its own level drops 1.90 → 1.60 in (600, 900]; at 900 a newcomer m is
    # placed on s1 and the agent closes w's window there (the split report, folded after the
    # placement): that window ran before m arrived
    st = fold([server("s1"), *running("w", "s1", caused=10.0), seen("w", 300, 1.90), seen("w", 600, 1.90),
               *running("m", "s1", at=900.0, caused=5.0), seen("w", 900, 1.60)])
    assert st.servers["s1"].residents_changed_at == 900.0
    assert assess(st, split_reports=False) == ()  # the change at 900 dropped the window
    (req,) = assess(st)
    assert "baseline 1.900" in req.reason
    # without 8.16's wait the window is judged at once, and the same step is claimed
    assert len(assess(st, attribution_wait=False)) == 1
    # the claim re-baselines w: the next window, which ran with m, has nothing to compare with
    st = fold([req, seen("w", 960, 1.40)], st)
    assert assess(st) == ()

"""Ladder 8.7: a service's capacity calibrated on its own latency telemetry
(`reprovisioning.calibration`), and the decisions where it differs from 8.5; ladder 8.9: a fit
above the estimate used as far as the same servers have shown, where it differs from 8.8."""

from __future__ import annotations

import math

from sextant_contracts import events as ev
from sextant_contracts.model import ThroughputLatencyTarget, WorkloadKind
from sextant_core.reprovisioning.adaptive import LADDERS, VERSION
from sextant_core.reprovisioning.calibration import fit
from sextant_core.state import fold
from sextant_core.state.evolve import LATENCY_KEPT
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import alloc, record, server

from .test_adaptive import observe, running

K = 1000.0 * math.log(100.0)  # the M/M/1 tail: p99 − base = K / (μ − λ), ms × requests/s


def p99(mu: float, x: float, base: float, k: float = K) -> float:
    return base + k / (mu - x)


def test_the_fit_recovers_the_knee_of_an_mm1_tail() -> None:
    # 6 nodes whose classification says 54e3 each; truly μ = 1.45 × that, base 0.065 ms
    base, bound, m = 0.065, 0.255, 54.0e3
    mu = 1.45 * m
    pts = [(x, m, p99(mu, x, base)) for x in (35e3, 40e3, 44e3, 48e3, 51e3, 53e3)]
    for tail in (K, None):  # the M/M/1 constant given, or fitted too
        f = fit(pts, bound, tail=tail)
        assert f is not None
        true_knee = 6 * (mu - K / (bound - base))
        assert abs(f.knee(6 * m, 6, bound) - true_knee) < 1e-3 * true_knee
        assert abs(f.base_ms - base) < 1e-3 and abs(f.scale - 1.45) < 0.01
        # on equal nodes the load at which 99 % of requests meet the bound is that knee
        assert abs(f.capacity([m] * 6, bound, 0.99) - true_knee) < 2e-3 * true_knee
    # on 16 weaker nodes (42.5e3 each) the same fit predicts the smaller knee the fixed headroom
    # leaves: 16 × (1.45 × 42.5e3 − K / 0.19), 12 % below the estimate's proportional 16 × 42.5e3
    on16 = f.knee(16 * 42.5e3, 16, bound)
    assert abs(on16 - 16 * (1.45 * 42.5e3 - K / (bound - base))) < 1e-3 * on16
    assert on16 < 0.9 * 16 * 42.5e3


def test_strong_nodes_carry_a_weak_one_past_the_bound() -> None:
    # requests are counted over the nodes: at the load where the weakest node's p99 reaches the
    # bound, the stronger ones are well within it, so 99 % of all requests meet it at a higher load
    base, bound = 0.065, 0.255
    f = fit([(x, 54.0e3, p99(1.45 * 54.0e3, x, base)) for x in (35e3, 40e3, 44e3, 48e3, 51e3, 53e3)], bound)
    assert f is not None
    nodes = [42.5e3] * 4 + [50.0e3] * 4 + [55.0e3] * 8
    knee = f.knee(16 * min(nodes), 16, bound)
    assert f.share(nodes, knee, bound) > 0.99
    cap = f.capacity(nodes, bound, 0.99)
    assert cap > 1.05 * knee and abs(f.share(nodes, cap, bound) - 0.99) < 1e-3


def test_no_fit_without_enough_points_or_spread() -> None:
    base, bound, m = 0.065, 0.255, 54.0e3
    mu = 1.45 * m
    few = [(x, m, p99(mu, x, base)) for x in (35e3, 40e3, 44e3)]
    assert fit(few, bound) is None
    flat = [(x, m, p99(mu, x, base)) for x in (50e3, 50.2e3, 50.4e3, 50.6e3, 50.8e3, 51e3)]
    assert fit(flat, bound) is None
    # saturated points (p99 clipped at 10 × the bound) are left out
    saturated = [(x, m, 10 * bound) for x in (60e3, 61e3, 62e3, 63e3)]
    assert fit(few + saturated, bound) is None


# --- the ladder: 8.7 against 8.5 on crafted telemetry --------------------------------------------

BOUND = 1.0
UP = {"c1": 1.0e4, "c2": 1.9e4, "c4": 3.5e4, "c8": 6.0e4}  # the model: 6e4 requests/s a node of 8 cores


def telemetry(st: ClusterState, wid: str, loads: list[float], base: float, mu: float, nodes: int) -> ClusterState:
    """`st` after one observation a minute (a history shorter than the forecast's hour) with these
    offered loads and the p99 of `nodes` M/M/1 nodes of capacity `mu`."""
    return fold([ev.PerformanceObserved(at=3000.0 + 60.0 * i, workload_id=wid, value=x, ratio_to_target=1.01,
                                        p99_latency_ms=p99(mu, x / nodes, base), offered=x)
                 for i, x in enumerate(loads)], st)


def three_nodes() -> tuple[ClusterState, str]:
    servers = [server(f"s{i}", cores=8) for i in range(4)]
    a = alloc(*((f"s{i}", 8, 4.0) for i in range(3)))  # 3 × 6e4 = 1.8e5 by the model
    events = running("svc", a, target=ThroughputLatencyTarget(qps=5.0e4, p99_latency_ms=BOUND),
                     kind=WorkloadKind.SERVICE)
    events[1] = events[1].model_copy(update={"scale_up": UP, "heterogeneity": {"A": 1.0e4}})
    return fold([*servers, *events]), "svc"


def decides_as(st: ClusterState, wid: str, old: str, *, load: float, p99: float, at: float) -> bool:
    """The current ladder decides as ladder `old` on this observation (a service at `load`)."""
    def seen(version: str) -> object:
        return observe(st, wid, ratio=1.01, value=load, offered=load, p99=p99, at=at, p=LADDERS[version])
    return seen(old) == seen(VERSION)


def test_the_latency_history_is_kept_with_its_allocation() -> None:
    st, wid = three_nodes()
    st = telemetry(st, wid, [4.0e4 + 1e3 * i for i in range(LATENCY_KEPT + 3)], base=0.1, mu=6.0e4, nodes=3)
    hist = st.workloads[wid].latency_history
    assert len(hist) == LATENCY_KEPT and hist[-1][1] == 4.0e4 + 1e3 * (LATENCY_KEPT + 2)
    assert hist[-1][3] == st.workloads[wid].allocation


def test_87_reclaims_a_service_whose_p99_is_mostly_its_base_latency() -> None:
    # base 0.75 ms of a 1 ms bound, nodes of μ 7.8e4: at 6e4 on 3 nodes the p99 is 0.83 ms, above
    # the cool band (0.7), so 8.5 keeps 3 nodes at utilisation 0.33; the fit says each node
    # carries 7.8e4 − K / 0.25 = 5.96e4 with 99 % of requests within the bound (u 0.34 < 0.92),
    # and 2 nodes carry 6e4 / 0.97
    st, wid = three_nodes()
    st = telemetry(st, wid, [4e4, 5e4, 6e4, 7e4, 8e4, 9e4, 10e4, 7e4], base=0.75, mu=7.8e4, nodes=3)
    now = p99(7.8e4, 2.0e4, 0.75)
    assert now > 0.8
    assert observe(st, wid, ratio=1.01, value=6e4, offered=6e4, p99=now, at=3600.0, p=LADDERS["8.5"]) == ()
    (adj,) = observe(st, wid, ratio=1.01, value=6e4, offered=6e4, p99=now, at=3600.0, p=LADDERS[VERSION])
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_in"
    assert len(adj.allocation.assignments) == 2 and "calibrated" in adj.reason


def test_87_keeps_the_nodes_a_fixed_headroom_needs_where_85_gives_them_back() -> None:
    # nodes of μ 5.31e4, base 0.1 ms: at 1e5 on 3 nodes the p99 is 0.33 ms (cool) and the
    # estimate says u = 0.56, so 8.5 keeps 2 nodes (1.2e5 ≥ 1e5 / 0.92); the fit says a node
    # carries 5.31e4 − K / 0.9 = 4.8e4 within the bound, 2 nodes 9.6e4 < 1e5 / 0.97: 8.7 keeps 3
    st, wid = three_nodes()
    st = telemetry(st, wid, [6e4, 8e4, 10e4, 12e4, 14e4, 12e4, 11e4, 10e4], base=0.1, mu=5.31e4, nodes=3)
    now = p99(5.31e4, 1.0e5 / 3, 0.1)
    assert now < 0.7
    (old,) = observe(st, wid, ratio=1.01, value=1e5, offered=1e5, p99=now, at=3600.0, p=LADDERS["8.5"])
    assert isinstance(old, ev.AllocationAdjusted) and len(old.allocation.assignments) == 2
    new = observe(st, wid, ratio=1.01, value=1e5, offered=1e5, p99=now, at=3600.0, p=LADDERS[VERSION])
    # (at most a core a node back, where the scale-up curve is flat enough)
    assert all(isinstance(e, ev.AllocationAdjusted) and len(e.allocation.assignments) == 3 for e in new)


def test_a_fit_far_off_the_estimate_is_not_used() -> None:
    # nodes truly a quarter of the model's: the fit's capacity is 0.17 × the estimate's, beyond
    # `calibration_max_factor` (the knee not identifiable, by this rule): 8.7 decides as 8.5
    st, wid = three_nodes()
    st = telemetry(st, wid, [1.2e4, 1.6e4, 2.0e4, 2.4e4, 2.8e4, 2.2e4, 1.8e4, 2.0e4], base=0.1, mu=1.5e4, nodes=3)
    now = p99(1.5e4, 2.0e4 / 3, 0.1)
    assert decides_as(st, wid, "8.5", load=2e4, p99=now, at=3600.0)


def test_without_latency_points_87_decides_as_85() -> None:
    st, wid = three_nodes()
    for ratio, load, p in ((1.01, 3.0e4, 0.2), (1.01, 2.0e5, 0.3)):
        assert observe(st, wid, ratio=ratio, value=load, offered=load, p99=p, p=LADDERS["8.5"]) == \
            observe(st, wid, ratio=ratio, value=load, offered=load, p99=p, p=LADDERS[VERSION])


# --- ladder 8.9: a fit above the estimate, used as far as the service has shown it ---------------


def test_89_follows_a_conservative_estimate_upward_as_far_as_shown() -> None:
    # nodes truly μ 1.5e5 (2.5 × the model's 6e4), base 0.3 ms of a 1 ms bound: 3 nodes carry
    # 2.4 × the estimate's 1.8e5 within the bound by the fit, beyond `calibration_max_factor`, so
    # 8.8 discards it and keeps 2 nodes for 9e4 (u 0.75 of the estimate < 0.8, 2 × 6e4 ≥ 9e4 / 0.92);
    # the points served 1.22 × the estimate with the p99 at 0.36 of the bound, so 8.9 uses the fit
    # capped at 1.3 × 1.22 of the estimate: one node carries 9e4 / 0.97
    st, wid = three_nodes()
    loads = [1.4e5, 1.6e5, 1.8e5, 2.0e5, 2.2e5, 1.8e5, 1.6e5, 1.2e5]
    st = telemetry(st, wid, loads, base=0.3, mu=1.5e5, nodes=3)
    now = p99(1.5e5, 9e4 / 3, 0.3)
    v89 = LADDERS[VERSION]
    assert v89.calibration_demonstrated_latency is not None and now < v89.calibration_demonstrated_latency
    (old,) = observe(st, wid, ratio=1.01, value=9e4, offered=9e4, p99=now, at=3600.0, p=LADDERS["8.8"])
    assert isinstance(old, ev.AllocationAdjusted) and len(old.allocation.assignments) == 2
    assert "calibrated" not in old.reason
    (new,) = observe(st, wid, ratio=1.01, value=9e4, offered=9e4, p99=now, at=3600.0, p=v89)
    assert isinstance(new, ev.AllocationAdjusted) and len(new.allocation.assignments) == 1
    assert "calibrated" in new.reason and "shown" in new.reason


def test_89_shows_nothing_with_a_p99_near_the_bound() -> None:
    # a flat p99 near the bound (base 0.88 ms of 1 ms, μ 3e5 a node): the fit says 4 × the estimate,
    # but no point had its p99 within `calibration_demonstrated_latency` of the bound: 8.9 decides
    # as 8.8 (the fit discarded)
    st, wid = three_nodes()
    st = telemetry(st, wid, [1.4e5, 1.6e5, 1.8e5, 2.0e5, 2.2e5, 1.8e5, 1.6e5, 1.2e5], base=0.88, mu=3e5, nodes=3)
    now = p99(3e5, 1.2e5 / 3, 0.88)
    assert now > LADDERS[VERSION].calibration_demonstrated_latency  # type: ignore[operator]
    for load in (1.2e5, 9e4):
        assert decides_as(st, wid, "8.8", load=load, p99=now, at=3600.0)


def test_89_shows_nothing_below_the_estimate() -> None:
    # the same strong nodes, but every point served at most 0.6 of the estimate: 1.3 × 0.6 is
    # below `calibration_max_factor`, so the fit (2.4 ×) stays discarded, as in 8.8
    st, wid = three_nodes()
    st = telemetry(st, wid, [6e4, 7e4, 8e4, 9e4, 1.0e5, 1.1e5, 9e4, 8e4], base=0.3, mu=1.5e5, nodes=3)
    now = p99(1.5e5, 5e4 / 3, 0.3)
    assert decides_as(st, wid, "8.8", load=5e4, p99=now, at=3600.0)


def test_89_counts_what_these_servers_have_shown() -> None:
    # the same strong points, measured on s0–s2; the service then moved to s1–s3: s3 has shown
    # nothing, so the fit (2.4 × the estimate) is discarded for this allocation, as in 8.8
    st, wid = three_nodes()
    st = telemetry(st, wid, [1.4e5, 1.6e5, 1.8e5, 2.0e5, 2.2e5, 1.8e5, 1.6e5, 1.2e5], base=0.3, mu=1.5e5, nodes=3)
    moved = alloc(*((f"s{i}", 8, 4.0) for i in (1, 2, 3)))
    st = fold([ev.AllocationAdjusted(at=3450.0, workload_id=wid, decision=record(9), action="migrate",
                                     allocation=moved, reason="moved")], st)
    now = p99(1.5e5, 9e4 / 3, 0.3)
    assert st.workloads[wid].allocation == moved
    assert decides_as(st, wid, "8.8", load=9e4, p99=now, at=3900.0)

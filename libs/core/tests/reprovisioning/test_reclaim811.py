"""Ladder 8.11 (services): a reclaim stepped (`reclaim_max_share`), the first hour's cool band the
forecast's (`cool_latency`), and no in-place scale-up for a predicted gain below
`service_scale_up_min_gain` — where each differs from 8.10 (docs/adaptation/diurnal.md, "Ladder 8.11")."""

from __future__ import annotations

from sextant_contracts import events as ev
from sextant_contracts.model import ThroughputLatencyTarget, WorkloadKind
from sextant_core.reprovisioning.adaptive import LADDERS
from sextant_core.state import fold
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import alloc, server

from .test_adaptive import observe, running

UP = {"c1": 1.0e4, "c2": 1.9e4, "c4": 3.5e4, "c8": 6.0e4}  # the model: 6e4 requests/s a node of 8 cores
BOUND = 1.0
P99 = 0.2  # a cool p99 and no latency history: no fit, no forecast; the estimate decides


def service(nodes: int, servers: int, cores: int = 8, up: dict[str, float] | None = None) -> ClusterState:
    a = alloc(*((f"s{i}", 8, 4.0) for i in range(nodes)))
    events = running("svc", a, target=ThroughputLatencyTarget(qps=5.0e4, p99_latency_ms=BOUND),
                     kind=WorkloadKind.SERVICE)
    events[1] = events[1].model_copy(update={"scale_up": up or UP, "heterogeneity": {"A": 1.0e4}})
    return fold([*(server(f"s{i}", cores=cores) for i in range(servers)), *events])


def seen(st: ClusterState, load: float, version: str, p99: float = P99, at: float = 3600.0) -> tuple[ev.Event, ...]:
    return observe(st, "svc", ratio=1.01, value=load, offered=load, p99=p99, at=at, p=LADDERS[version])


def nodes_after(out: tuple[ev.Event, ...], before: int) -> int:
    adj = [e for e in out if isinstance(e, ev.AllocationAdjusted)]
    return len(adj[-1].allocation.assignments) if adj else before


def test_811_gives_back_at_most_half_the_nodes_at_once() -> None:
    # 8 nodes of 6e4 by the model at 5e4: one node keeps u ≤ 0.92; 8.10 gives back 7 in one
    # step, 8.11 four (half), the next window two more
    st = service(8, 8)
    assert nodes_after(seen(st, 5.0e4, "8.10"), 8) == 1
    (new,) = seen(st, 5.0e4, "8.11")
    assert isinstance(new, ev.AllocationAdjusted) and new.action == "scale_in"
    assert len(new.allocation.assignments) == 4
    assert nodes_after(seen(fold([new], st), 5.0e4, "8.11", at=4200.0), 4) == 2


def test_811_reclaims_in_the_first_hour_with_the_p99_below_085_of_the_bound() -> None:
    # 4 nodes at 1e5 (u 0.42 by the model), p99 at 0.8 of the bound — mostly base latency: 8.10's
    # reactive cool band (0.7) keeps every node, 8.11 (0.85, the forecast's) gives back two
    st = service(4, 4)
    assert seen(st, 1.0e5, "8.10", p99=0.8) == ()
    assert nodes_after(seen(st, 1.0e5, "8.11", p99=0.8), 4) == 2
    # at 0.9 of the bound neither reclaims
    assert seen(st, 1.0e5, "8.10", p99=0.9) == () == seen(st, 1.0e5, "8.11", p99=0.9)


def test_811_skips_an_in_place_scale_up_the_model_says_adds_almost_nothing() -> None:
    # one node of 8 cores on a 24-core server, memcached-like: 24 cores predicted 3 % above 8; at
    # 1.2 × its capacity, 8.10 grows the node in place (a gain ≥ 1 %), 8.11 adds a second node
    st = service(1, 2, cores=24, up={**UP, "c16": 6.1e4, "c24": 6.18e4})
    (old,) = seen(st, 7.2e4, "8.10")
    assert isinstance(old, ev.AllocationAdjusted) and old.action == "scale_up"
    assert old.allocation.assignments[0].cores > 8 and len(old.allocation.assignments) == 1
    (new,) = seen(st, 7.2e4, "8.11")
    assert isinstance(new, ev.AllocationAdjusted) and new.action == "scale_out"
    assert len(new.allocation.assignments) == 2


def test_811_still_scales_up_in_place_where_the_model_predicts_a_real_gain() -> None:
    # a service whose model doubles from 8 to 16 cores: 8.11 grows it in place, as 8.10
    st = service(1, 2, cores=24, up={**UP, "c16": 1.2e5, "c24": 1.6e5})
    old, new = seen(st, 7.2e4, "8.10"), seen(st, 7.2e4, "8.11")
    assert old == new and isinstance(new[0], ev.AllocationAdjusted) and new[0].action == "scale_up"

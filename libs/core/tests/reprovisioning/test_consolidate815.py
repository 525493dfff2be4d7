"""Ladder 8.15 (services): where a reclaim can drop no node whole, the weakest nodes consolidate onto
fewer, stronger free servers (`consolidate_max_moves`) — where it differs from 8.14
(docs/adaptation/diurnal.md, "Ladder 8.15")."""

from __future__ import annotations

from sextant_contracts import events as ev
from sextant_contracts.model import ThroughputLatencyTarget, WorkloadKind
from sextant_core.reprovisioning.adaptive import LADDERS
from sextant_core.state import fold
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import alloc, server

from .test_adaptive import observe, running

UP = {"c1": 1.0e4, "c2": 1.9e4, "c4": 3.5e4, "c8": 6.0e4}
# the model's level per platform: a node of 8 cores is 6e4 requests/s on A, 9e4 on C, 1.2e5 on B
LEVELS = {"A": 1.0e4, "B": 2.0e4, "C": 1.5e4}
BOUND = 1.0
P99 = 0.2  # a cool p99 and no latency history: no fit, no forecast; the estimate decides


def service(held: dict[str, str], free: dict[str, str], levels: dict[str, float] | None = None) -> ClusterState:
    """`held`/`free`: server id → platform; the service runs one node of 8 cores on each held server."""
    a = alloc(*((sid, 8, 4.0) for sid in sorted(held)))
    events = running("svc", a, target=ThroughputLatencyTarget(qps=5.0e4, p99_latency_ms=BOUND),
                     kind=WorkloadKind.SERVICE)
    events[1] = events[1].model_copy(update={"scale_up": UP, "heterogeneity": levels or LEVELS})
    servers = [server(sid, platform=pl, cores=8) for sid, pl in sorted({**held, **free}.items())]
    return fold([*servers, *events])


def seen(st: ClusterState, load: float, version: str) -> tuple[ev.Event, ...]:
    return observe(st, "svc", ratio=1.01, value=load, offered=load, p99=P99, at=3600.0, p=LADDERS[version])


HELD = {"a1": "A", "a2": "A", "c1": "C", "c2": "C", "c3": "C"}  # 5 × 6e4 by the estimate (k × the weakest)


def test_815_consolidates_the_two_weakest_nodes_onto_one_stronger_free_server() -> None:
    # 2.3e5 on 5 nodes (u 0.77 < 0.8): the rest must hold 2.3e5 / 0.92 = 2.5e5; without one A node
    # 4 × 6e4 = 2.4e5 is short, so 8.14 keeps all five (it trims cores); 8.15 gives both A nodes up
    # for the free B server: 3 C + 1 B = 4 × 9e4 = 3.6e5, one node fewer
    st = service(HELD, {"b1": "B", "a3": "A"})
    assert {len(e.allocation.assignments) for e in seen(st, 2.3e5, "8.14") if isinstance(e, ev.AllocationAdjusted)} \
        <= {5}
    (new,) = seen(st, 2.3e5, "8.15")
    assert isinstance(new, ev.AllocationAdjusted) and new.action == "scale_in"
    assert sorted(new.allocation.servers) == ["b1", "c1", "c2", "c3"]
    assert "consolidated 2 node(s) onto 1" in new.reason


def test_815_does_not_consolidate_onto_a_server_no_stronger_than_the_nodes_given_up() -> None:
    # the only free server is an A, as strong as the A nodes given up: 8.15 decides as 8.14; a
    # free C (stronger than both A nodes) takes their load: 4 × 9e4
    st = service(HELD, {"a3": "A"})
    assert seen(st, 2.3e5, "8.15") == seen(st, 2.3e5, "8.14")
    (new,) = seen(service(HELD, {"c4": "C"}), 2.3e5, "8.15")
    assert isinstance(new, ev.AllocationAdjusted) and sorted(new.allocation.servers) == ["c1", "c2", "c3", "c4"]


def test_815_does_not_consolidate_where_the_rest_would_be_short() -> None:
    # at 2.9e5 (u 0.97: no reclaim at all) and at 2.6e5 with every node as strong as the free one
    st = service(HELD, {"b1": "B"})
    assert seen(st, 2.9e5, "8.15") == ()
    st = service({"b2": "B", "b3": "B", "b4": "B"}, {"b1": "B"})
    assert seen(st, 2.95e5, "8.15") == ()


def test_815_drops_a_node_whole_where_it_can_as_814() -> None:
    # 2.0e5: 4 × 6e4 = 2.4e5 ≥ 2.0e5 / 0.92 — a plain drop of the weakest node, as 8.14
    st = service(HELD, {"b1": "B"})
    assert seen(st, 2.0e5, "8.14") == seen(st, 2.0e5, "8.15")
    (new,) = seen(st, 2.0e5, "8.15")
    assert isinstance(new, ev.AllocationAdjusted) and new.action == "scale_in"
    assert "consolidated" not in new.reason and len(new.allocation.assignments) < 5


def test_815_is_814_with_the_consolidation_811s_reclaim_rules_and_half_the_forecast_margin() -> None:
    from dataclasses import replace

    assert LADDERS["8.14"].consolidate_max_moves is None  # 8.14 and older never consolidate
    assert LADDERS["8.15"] == replace(LADDERS["8.14"], consolidate_max_moves=2, reclaim_max_share=0.5,
                                      cool_latency=0.85, forecast_z=0.5)

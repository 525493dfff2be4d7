"""The classification-driven profiling plan."""

from __future__ import annotations

from collections import Counter

import pytest
from sextant_contracts.model import Classification, WorkloadKind
from sextant_core.decide import DecisionContext
from sextant_core.profiling.plan import DefaultProfilingPlan, column_cores
from sextant_core.state import fold
from sextant_core.testing.builders import server


def _state(kind: WorkloadKind = WorkloadKind.ANALYTICS):  # type: ignore[no-untyped-def]
    from sextant_contracts import events as ev
    events = [server("h1", platform="H", cores=16, memory_gb=64), server("m1", platform="M", cores=8),
              server("s1", platform="S", cores=2), server("t1", platform="T", cores=4),
              ev.WorkloadSubmitted(at=1, workload_id="w", tenant="t", kind=kind,
                                   target={"type": "completion_time", "seconds": 9.0},
                                   spec={"type": "twin", "ref": "w"})]
    st = fold(events)
    return st, st.workloads["w"]


def _ctx(seed: int) -> DecisionContext:
    return DecisionContext(at=1.0, seed=seed, state_position=0, causation=(), profile="p", policy_version="1")


@pytest.mark.parametrize("kind,scale_out", [(WorkloadKind.ANALYTICS, 1), (WorkloadKind.SERVICE, 1),
                                            (WorkloadKind.BATCH, 0)], ids=["analytics", "service", "batch"])
def test_two_entries_per_row(kind: WorkloadKind, scale_out: int) -> None:
    st, w = _state(kind)
    runs = DefaultProfilingPlan().plan(st, w, _ctx(7))
    n = Counter(r.classification for r in runs)
    # 2 scale-up + 1 heterogeneity (+ the reference) + 1 scale-out (+ n1 from the reference) + 2 ramps
    assert n == {Classification.SCALE_UP: 2, Classification.HETEROGENEITY: 1,
                 Classification.INTERFERENCE: 2, **({Classification.SCALE_OUT: 1} if scale_out else {})}
    ups = [r for r in runs if r.classification is Classification.SCALE_UP]
    assert all(r.platform == "H" for r in ups) and ups[0].cores <= ups[1].cores
    ref = ups[0].cores
    for r in runs:
        if r.classification is not Classification.SCALE_UP:
            assert r.cores == ref  # every other run uses the reference configuration
    het = next(r for r in runs if r.classification is Classification.HETEROGENEITY)
    assert het.platform != "H" and {"M": 8, "S": 2, "T": 4}[het.platform] >= ref
    # scale-out: the farthest node count online profiling uses (n1 comes from the reference run)
    assert [(r.column, r.nodes) for r in runs if r.classification is Classification.SCALE_OUT] == \
        ([("n4", 4)] if scale_out else [])


def test_more_scale_out_entries_add_nearer_node_counts() -> None:
    st, w = _state()
    nodes = {e: [r.nodes for r in DefaultProfilingPlan(entries=e).plan(st, w, _ctx(1))
                 if r.classification is Classification.SCALE_OUT] for e in (1, 2, 3, 4, 6)}
    assert nodes == {1: [], 2: [4], 3: [3, 4], 4: [2, 3, 4], 6: [2, 3, 4]}


def test_plan_is_reproducible_and_varies_with_the_seed() -> None:
    st, w = _state()
    plans = [DefaultProfilingPlan().plan(st, w, _ctx(s)) for s in range(12)]
    assert DefaultProfilingPlan().plan(st, w, _ctx(3)) == plans[3]
    assert len({tuple((r.classification, r.column) for r in p) for p in plans}) > 3


def test_entries_sweep() -> None:
    st, w = _state()
    runs = DefaultProfilingPlan(entries=4).plan(st, w, _ctx(1))
    n = Counter(r.classification for r in runs)
    assert n[Classification.SCALE_UP] == 4 and n[Classification.INTERFERENCE] == 4
    assert n[Classification.SCALE_OUT] == 3  # n2, n3, n4 (+ n1 from the reference)
    assert len({r.column for r in runs if r.classification is Classification.INTERFERENCE}) == 4


def test_column_cores() -> None:
    assert (column_cores("c4"), column_cores("c16-m8"), column_cores("n2"), column_cores("cx")) == (4, 16, None, None)


def test_no_server_no_plan() -> None:
    from sextant_contracts import events as ev
    st = fold([ev.WorkloadSubmitted(at=1, workload_id="w", tenant="t", kind="batch",
                                    target={"type": "completion_time", "seconds": 9.0},
                                    spec={"type": "twin", "ref": "w"})])
    assert DefaultProfilingPlan().plan(st, st.workloads["w"], _ctx(0)) == ()


def test_the_dense_plan_of_sextant_dense_profiles_every_column() -> None:
    from sextant_contracts.model import INTERFERENCE_SOURCES
    from sextant_core.planning.policysets import DENSE_PROFILING
    from sextant_core.profiles import policy_set

    assert policy_set("sextant-dense").profiling is DENSE_PROFILING
    st, w = _state(WorkloadKind.ANALYTICS)
    runs = DENSE_PROFILING.plan(st, w, _ctx(7))
    by = {c: [r for r in runs if r.classification is c] for c in Classification}
    ups = by[Classification.SCALE_UP]
    assert len(ups) == len(DENSE_PROFILING.scale_up_columns(st, w.kind, 16))  # every configuration
    ref = min(r.cores for r in ups)
    # every other platform with room for the reference configuration, every source, 2–4 nodes
    assert {r.platform for r in by[Classification.HETEROGENEITY]} == \
        {p for p, c in {"M": 8, "S": 2, "T": 4}.items() if c >= ref}
    assert sorted(r.column for r in by[Classification.INTERFERENCE]) == sorted(s.value for s in INTERFERENCE_SOURCES)
    assert sorted(r.nodes for r in by[Classification.SCALE_OUT]) == [2, 3, 4]


@pytest.mark.parametrize("requested,ref", [(64, 8), (2, 2), (3, 4)])
def test_a_service_is_profiled_near_its_request(requested: int, ref: int) -> None:
    from sextant_contracts import events as ev
    events = [server("h1", platform="H", cores=16, memory_gb=64), server("m1", platform="M", cores=8),
              server("s1", platform="S", cores=2), server("t1", platform="T", cores=4),
              ev.WorkloadSubmitted(at=1, workload_id="w", tenant="t", kind=WorkloadKind.SERVICE,
                                   target={"type": "throughput_latency", "qps": 1000.0, "p99_latency_ms": 1.0},
                                   spec={"type": "twin", "ref": "w"}, requested_cores=requested)]
    st = fold(events)
    # platform cores 16, 8, 4, 2: half of them have at least 8 → the reference is
    # min(requested, 8) cores, as the smallest column c1, c2, c4, c8, c16 with at least that many
    for seed in range(6):
        runs = DefaultProfilingPlan().plan(st, st.workloads["w"], _ctx(seed))
        ups = [r for r in runs if r.classification is Classification.SCALE_UP]
        # the reference first, then the smallest other configuration (the latency knee's side)
        assert ups[0].cores == ref and ups[1].cores == (1 if ref != 1 else 2)
        assert all(r.cores == ref for r in runs if r.classification is not Classification.SCALE_UP)

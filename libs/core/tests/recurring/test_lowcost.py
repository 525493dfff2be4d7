"""LowCost (recurring/lowcost.py): each unit lands where spec §3.5 says, the loop over end points keeps the cheapest, and a brute-force search over
every feasible allocation of tiny instances bounds it (and matches it for one-stage jobs)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.recurring.lowcost import (
    Folded,
    Job,
    LowCostParams,
    as_lists,
    fold,
    place,
    place_at,
    place_ends,
    stage,
)


def folded(load: list[float], free: list[int], cores: float = 1.0, cap: float = 10.0) -> Folded:
    d = len(load)
    return Folded(np.array([load, [0.0] * d]), np.array([[cores / cap] * d, [0.0] * d]),
                  np.array(free, dtype=np.float64))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_stage_is_contiguous_ends_at_its_right_edge_and_respects_room(data: st.DataObject) -> None:
    d = data.draw(st.integers(1, 7))
    load = data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 0.7]), min_size=d, max_size=d))
    free = data.draw(st.lists(st.integers(0, 12), min_size=d, max_size=d))
    s = data.draw(st.integers(1, 40))
    gang = data.draw(st.integers(1, 3))
    units = data.draw(st.sampled_from([2, 4, 16]))
    tl = data.draw(st.integers(0, d - 1))
    got = stage(as_lists(folded(load, free)), tl, d - 1, s, gang, units)
    q = gang * -(-s // (gang * units))
    run = []  # the steps a stage can reach: from τr leftwards until a step without room for a unit
    for f in reversed(free[tl:]):
        if f < q:
            break
        run.append(min(f // q, -(-s // q)))
    if got is None:
        assert sum(run) * q < s
        return
    first, x = got
    assert tl <= first and first + len(x) == d
    assert sum(x) == s and all(v > 0 for v in x)  # no holes
    assert all(v <= min(f, s) for v, f in zip(x, free[first:], strict=True))


def test_each_unit_goes_to_the_cheapest_eligible_step() -> None:
    # spec §3.5 step 3 by hand, 1 container per unit, 1 core of 10 = 0.1 per unit:
    # load 0.1 at τr = 5 (room 1), 0 at 4 (room 2) and 3 (room 1). Unit 1: only τr eligible -> 5.
    # Unit 2: {4, 5}, 5 is full -> 4 (cost 0). Unit 3: {3, 4, 5}: 3 costs 0, 4 costs 0.1 -> 3.
    got = stage(as_lists(folded([0, 0, 0, 0, 0, 0.1], [0, 0, 0, 1, 2, 1])), 0, 5, 3, 1, 16)
    assert got == (3, [1, 1, 1])
    # flat costs: after its unit τr costs 0.1 > 0 at τr − 1, so the stage walks left one unit a step
    assert stage(as_lists(folded([0.0] * 10, [5] * 10)), 0, 9, 4, 1, 16) == (6, [1, 1, 1, 1])


def allocations(job: Job, span: int, free: np.ndarray):
    """Every allocation of the job's stages (sequential, contiguous, each step ≤ s_k and ≤ free)."""
    def rec(k: int, start: int, acc: list[tuple[int, list[int]]]):
        if k == len(job.stages):
            yield acc
            return
        s = job.stages[k]
        for length in range(1, span - start - (len(job.stages) - k - 1) + 1):
            for parts in itertools.product(range(1, s + 1), repeat=length):
                if sum(parts) != s or any(p > free[start + i] for i, p in enumerate(parts)):
                    continue
                yield from rec(k + 1, start + length, [*acc, (start, list(parts))])
    for first in range(span):
        yield from rec(0, first, [])


def brute_force_peak(f: Folded, job: Job, span: int) -> float:
    best = np.inf
    for acc in allocations(job, span, f.free):
        x = np.zeros(span)
        for start, parts in acc:
            x[start:start + len(parts)] = parts
        cost = (f.load + x * f.step_cost).max(axis=0)
        best = min(best, float(cost[x > 0].max()))
    return best


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_lowcost_against_brute_force_on_tiny_instances(data: st.DataObject) -> None:
    span = data.draw(st.integers(2, 5))
    k = data.draw(st.integers(1, 2))
    stages = tuple(data.draw(st.lists(st.integers(1, 3), min_size=k, max_size=k)))
    cap = np.vstack([np.full(span, 4.0), np.full(span, 100.0)])
    used = np.array([data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=span, max_size=span)),
                     [0.0] * span])
    job = Job(stages, 0, span, span, cores=1.0, memory_gb=0.0)
    f = fold(used, cap, job)
    got = place(used, cap, job, LowCostParams(max_end_points=span, units_per_stage=16))
    best = brute_force_peak(f, job, span)
    if best == np.inf:
        assert got is None  # LowCost never finds what does not exist
    if k == 1:
        assert (got is None) == (best == np.inf)  # one stage: it finds one whenever one exists
    if got is None:  # several stages: the greedy may miss a fit (stage k takes the steps stage k − 1 needed)
        return
    x = np.zeros(span)
    x[got.offset:got.offset + len(got.containers)] = got.containers
    assert (x <= f.free).all() and (used[0] + x <= cap[0]).all()
    assert got.peak_cost >= best - 1e-12  # the brute force is optimal
    if k == 1:
        assert got.peak_cost == pytest.approx(best)  # one stage: the greedy over every end point is optimal


def test_end_points_loop_keeps_the_cheapest() -> None:
    # load 0.8 of 10 cores at steps 0-4, empty at 5-9: a 1-stage job of 10 containers ends at step 9,
    # spread over the empty steps (each gets 2: cost 0.2), never touching the loaded ones.
    cap = np.vstack([np.full(10, 10.0), np.full(10, 1000.0)])
    used = np.zeros((2, 10))
    used[0, :5] = 8
    got = place(used, cap, Job((10,), 0, 10, 10), LowCostParams(max_end_points=10))
    assert got is not None
    assert got.offset == 5 and got.containers == (2, 2, 2, 2, 2)
    assert got.peak_cost == pytest.approx(0.2)


def test_every_end_point_is_tried_by_the_reference_loop() -> None:
    # The chosen allocation is the minimum over end points of the per-end-point greedy (spec step 4).
    rng = np.random.default_rng(3)
    cap = np.vstack([np.full(48, 20.0), np.full(48, 160.0)])
    used = np.vstack([rng.integers(0, 15, 48).astype(float), np.zeros(48)])
    job = Job((4, 9, 6, 2), 3, 40, 48)
    params = LowCostParams(max_end_points=1000)
    got = place(used, cap, job, params)
    f = fold(used, cap, job)
    prefix = np.cumsum(job.stages)
    keys = []
    for e in range(len(job.stages) - 1, 37):
        a = place_at(f, job, e, prefix, params.units_per_stage)
        if a is not None:
            cost = (f.load + a * f.step_cost).max(axis=0)
            keys.append((float(cost[a > 0].max()), float(cost[a > 0].sum()), -e))
    assert got is not None and got.peak_cost == min(keys)[0]
    assert got.offset + len(got.containers) - 1 == job.earliest - min(keys)[2]


def test_folded_cost_is_the_max_over_instances() -> None:
    # hourly job on a 4-hour window of 1-hour steps... here 4 steps, period 2: offsets 0 and 1 see
    # max(load[0], load[2]) and max(load[1], load[3]).
    cap = np.vstack([np.full(4, 10.0), np.full(4, 80.0)])
    used = np.vstack([[1.0, 6.0, 5.0, 2.0], [0.0] * 4])
    f = fold(used, cap, Job((1,), 0, 2, 2))
    assert f.load[0].tolist() == [0.5, 0.6]
    assert f.free.tolist() == [5.0, 4.0]


def test_nothing_fits_returns_none() -> None:
    cap = np.vstack([np.full(6, 2.0), np.full(6, 16.0)])
    assert place(np.zeros((2, 6)), cap, Job((5, 5, 5), 0, 2, 6)) is None  # 3 stages, 2 steps
    assert place(np.zeros((2, 6)), cap, Job((20,), 0, 6, 6)) is None  # 20 containers > 6 × 2


def test_period_must_divide_the_window() -> None:
    with pytest.raises(ValueError, match="does not divide"):
        fold(np.zeros((2, 10)), np.ones((2, 10)), Job((1,), 0, 3, 3))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_all_end_points_at_once_equal_one_at_a_time(data: st.DataObject) -> None:
    span = data.draw(st.integers(3, 30))
    k = data.draw(st.integers(1, min(6, span)))
    stages = tuple(data.draw(st.lists(st.integers(0, 30), min_size=k, max_size=k)))
    if not any(stages):
        stages = (1, *stages[1:])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    cap = np.vstack([np.full(span, 20.0), np.full(span, 100.0)])
    used = np.vstack([rng.integers(0, 21, span).astype(float), rng.integers(0, 101, span).astype(float)])
    job = Job(stages, 0, span, span, cores=1.0, memory_gb=float(data.draw(st.sampled_from([0.0, 2.0, 8.0]))),
              gang=data.draw(st.integers(1, 2)))
    units = data.draw(st.sampled_from([1, 3, 8]))
    f = fold(used, cap, job)
    ends = np.arange(span - 1, k - 2, -1)
    alloc, ok = place_ends(f, job, ends, units)
    prefix = np.cumsum(stages)
    for row, e in enumerate(ends):
        one = place_at(f, job, int(e), prefix, units)
        assert ok[row] == (one is not None)
        if one is not None:
            assert alloc[row].tolist() == one.tolist()


def test_alignment_penalty_centres_the_allocation_in_its_window() -> None:
    # flat, empty plan: every end point has the same peak and total, so the latest end wins (steps
    # 16-19); with the alignment penalty the allocation's midpoint moves to the window's (9.5): 8-11.
    cap = np.vstack([np.full(20, 10.0), np.full(20, 80.0)])
    job = Job((4,), 0, 20, 20)
    plain = place(np.zeros((2, 20)), cap, job, LowCostParams(max_end_points=17))
    centred = place(np.zeros((2, 20)), cap, job, LowCostParams(max_end_points=17, alignment_weight=1.0))
    assert plain is not None and (plain.offset, plain.containers) == (16, (1, 1, 1, 1))
    assert centred is not None and (centred.offset, centred.containers) == (8, (1, 1, 1, 1))

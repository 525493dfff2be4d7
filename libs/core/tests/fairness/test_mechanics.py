"""Water-filling, settling targets under rigid jobs, and the VC-level schedulers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.fairness import EqualShare, Fifo, make_policy, settle, waterfill
from sextant_core.fairness.history import History

ints = st.lists(st.integers(0, 60), min_size=1, max_size=10)


@settings(max_examples=200, deadline=None)
@given(st.integers(-5, 400), ints, st.data())
def test_waterfill_contract(amount: int, caps: list[int], data: st.DataObject) -> None:
    w = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.25]),
                                    min_size=len(caps), max_size=len(caps))))
    c = np.array(caps, dtype=np.int64)
    got = waterfill(amount, c, w)
    assert ((got >= 0) & (got <= c)).all()
    assert (got[w == 0] == 0).all()
    assert got.sum() == max(0, min(amount, int(c[w > 0].sum())))


@pytest.mark.parametrize(("amount", "caps", "weights", "expected"), [
    (10, (10, 10), (1, 1), [5, 5]),  # equal level 5
    (9, (10, 10), (1, 2), [3, 6]),  # level 3: 1·3 and 2·3
    (7, (2, 10, 10), (1, 1, 1), [2, 3, 2]),  # 2 saturates, 5 left over two: 2.5 each, tie → lower index
], ids=["equal", "weighted", "saturate-and-tie"])
def test_waterfill_arithmetic(amount: int, caps: tuple, weights: tuple, expected: list[int]) -> None:
    assert waterfill(amount, np.array(caps), np.array(weights, dtype=float)).tolist() == expected


@st.composite
def states(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    n = draw(st.integers(1, 6))
    cap = np.array(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)), dtype=np.int64)
    dem = np.array(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)), dtype=np.int64)
    total = int(cap.sum()) + draw(st.integers(0, 20))
    cur = np.minimum(np.array(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))), dem)
    cur = cur - waterfill(max(0, int(cur.sum()) - total), cur, np.ones(n))  # what a cell can hold
    return cap, dem, np.asarray(cur, dtype=np.int64), np.array([total])


@settings(max_examples=200, deadline=None)
@given(states(), st.sampled_from(["maxmin", "capacity_weighted", "sextant"]))
def test_settle_keeps_guarantees_within_the_cell_and_wastes_no_server(s: tuple, name: str) -> None:
    cap, dem, cur, (total,) = s
    tgt = make_policy(name).targets(cap, dem, int(total), History.empty(cap.shape[0]))
    held = settle(tgt, cur, cap, dem, int(total))
    assert held.sum() <= total and (held <= dem).all()
    assert (held >= np.minimum(dem, cap)).all()  # guarantees are restored at once
    if held.sum() < total:  # work-conserving: servers stay free only when nobody waits
        assert (held == dem).all() or (held >= tgt).all()


def test_settle_does_not_preempt_to_rebalance_borrowers_only_to_restore_a_guarantee() -> None:
    cap, total = np.array([10, 10, 10]), 40
    # VC0 borrows 15 above its 10; VC1's demand rises to 25 (its target now 20): the cell is full,
    # VC1 holds its guarantee, so nothing is preempted — VC1 waits for VC0's jobs to finish
    tgt = np.array([20, 20, 0])
    assert settle(tgt, np.array([25, 15, 0]), cap, np.array([25, 25, 0]), total).tolist() == [25, 15, 0]
    # VC2 now wants 8 of its guarantee: preempted from the VC most above its target (VC0)
    tgt2 = np.array([17, 15, 8])
    assert settle(tgt2, np.array([25, 15, 0]), cap, np.array([25, 25, 8]), total).tolist() == [17, 15, 8]


def test_fifo_serves_each_vc_in_order_and_equal_share_splits_evenly() -> None:
    vc, par, held = np.array([0, 0, 0, 1, 1]), np.array([2, 3, 1, 1, 5]), np.array([4, 3])
    assert Fifo().shares(vc, par, held).tolist() == [2, 2, 0, 1, 2]
    # VC0: level 4/3 over caps 2, 3, 1 → 1, 1, 1 + one by largest remainder to the first
    assert EqualShare().shares(vc, par, held).tolist() == [2, 1, 1, 1, 2]

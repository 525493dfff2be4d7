"""Engine 3.2's rule of the analog fold-in (`analogs.shift_bank`, `AnalogParams.shift`): a new
row's measured 0 read as a shifted analog ("capacity minus a constant") instead of a penalty on the
analogs that served there — on crafted matrices with a known truth, as table-style cases."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from sextant_core.classification import analogs
from sextant_core.classification.analogs import AnalogParams, bank
from sextant_core.classification.engine import ENGINE_VERSIONS

NAN = math.nan
FM = (np.zeros(4), np.full(4, 0.5))


def _bank(rows: list[list[float]], ids: list[str] | None = None) -> analogs.AnalogBank:
    y = np.log(np.array(rows, dtype=np.float64))
    mask = np.isfinite(y)
    return bank(np.where(mask, y, 0.0), mask, ids=ids)


# columns 0..3 = 1, 2, 4, 8 cores (raw QPS, thousands). Family A is flat beyond 4 cores and serves
# on 1 core; family B doubles from 4 to 8 cores and serves nothing on 1 core (the cell is absent).
A = [[1.0, 2.5, 5.0, 5.0], [1.1, 2.6, 5.2, 5.2], [0.9, 2.4, 4.8, 4.8]]
B = [[NAN, 2.0, 5.0, 10.0], [NAN, 2.1, 5.1, 10.2]]


@pytest.mark.parametrize(("t", "k", "expect"), [
    # t -> K = v0 + t (m − v0) with v0 = 1 (A's 1-core value), m = 5 (A's value at the measured column)
    (0.0, 1.0, [NAN, 1.5, 4.0, 4.0]),
    (0.5, 3.0, [NAN, NAN, 2.0, 2.0]),  # 2.5 − 3 ≤ 0: the 2-core cell collapses too
    (0.25, 2.0, [NAN, 0.5, 3.0, 3.0]),
])
def test_shift_bank_subtracts_the_constant_per_step(t: float, k: float, expect: list[float]) -> None:
    bk = _bank([A[0], B[0]])
    out, moved = analogs.shift_bank(bk, np.array([0]), np.array([2]), (t,))
    got = np.where(out.mask[0], np.exp(out.y[0]), NAN)
    np.testing.assert_allclose(got, expect, rtol=1e-12)
    assert k == pytest.approx(A[0][2] - expect[2])
    # B has no value at the zero column: it is not moved, only its cells ≤ K_t (= t·m) are lost
    got_b = np.where(out.mask[1], np.exp(out.y[1]), NAN)
    kb = t * 5.0
    np.testing.assert_allclose(got_b, [NAN] + [v - kb if v - kb > 0 else NAN for v in B[0][1:]], rtol=1e-12)
    assert list(moved) == [1.0, 0.0]


def test_shift_bank_repeats_every_row_per_step_with_its_id() -> None:
    bk = _bank(A + B, ids=["a1", "a2", "a3", "b1", "b2"])
    out, moved = analogs.shift_bank(bk, np.array([0]), np.array([2]), (0.0, 0.25, 0.5))
    assert out.y.shape == (15, 4) and out.ids == bk.ids * 3
    assert list(moved) == [1.0, 1.0, 1.0, 0.0, 0.0] * 3
    # no zero column (or an empty grid): the bank as it is
    same, none = analogs.shift_bank(bk, np.array([], dtype=np.int64), np.array([2]), (0.0,))
    assert same is bk and not none.any()


def test_shift_bank_leaves_the_analogs_that_served_at_the_zero_unless_asked() -> None:
    # engine 3.2's setting (`served` False): A served on 1 core and stays as it is at every step
    # (its `zero_penalty` weighs it); B collapsed there and loses t·m at step t
    bk = _bank([A[0], B[0]])
    out, moved = analogs.shift_bank(bk, np.array([0]), np.array([2]), (0.0, 0.2), served=False)
    np.testing.assert_array_equal(out.y[0], bk.y[0])
    np.testing.assert_array_equal(out.y[2], bk.y[0])
    np.testing.assert_array_equal(out.mask[2], bk.mask[0])
    np.testing.assert_array_equal(out.y[1], bk.y[1])  # t = 0: B unchanged, bit for bit
    np.testing.assert_allclose(np.exp(out.y[3][1:]), [2.0 - 1.0, 5.0 - 1.0, 10.0 - 1.0])
    assert not moved.any()


E3 = AnalogParams(tau=0.05, beta=None, mix=0.0, zero_penalty=5.0, anchor=True)
E32 = AnalogParams(tau=0.05, beta=None, mix=0.0, zero_penalty=5.0, anchor=True, shift_grid=(0.0, 0.05, 0.1, 0.15, 0.2))


@pytest.mark.parametrize(("cell", "truth", "e3_err"), [
    # a new B row under a tighter bound (B's first row minus 1, thousands): 0 on 1 core, 1.0 on 2,
    # 4.0 on 4 (measured), 9.0 on 8 cores. Engine 3 scales B: 1.6 on 2 cores, 8.0 on 8
    (1, 1.0, 0.6),
    (3, 9.0, 1.0 / 9.0),
])
def test_a_row_that_collapsed_is_read_as_its_collapsed_analogs_minus_a_constant(cell: int, truth: float,
                                                                                e3_err: float) -> None:
    bk = _bank(A + B)
    cols, vals, zeros = np.array([2]), np.array([math.log(4.0)]), np.array([0])
    e3 = analogs.estimate(bk, cols, vals, *FM, E3, zeros=zeros)
    e32 = analogs.estimate(bk, cols, vals, *FM, E32, zeros=zeros)
    err3, err32 = abs(math.exp(e3[cell]) / truth - 1.0), abs(math.exp(e32[cell]) / truth - 1.0)
    assert err3 == pytest.approx(e3_err, abs=0.03)
    assert err32 < 0.75 * err3  # the shifted copies span the truth's constant


def test_a_served_analog_may_be_shifted_with_a_penalty() -> None:
    # `shift` set: A (served on 1 core) is shifted too, so a new A row under a tighter bound (A's
    # first row minus 1.5: 0, 1.0, 3.5, 3.5) is read as flat at 8 cores where engine 3 doubles it
    bk = _bank(A + B)
    cols, vals, zeros = np.array([2]), np.array([math.log(3.5)]), np.array([0])
    e3 = analogs.estimate(bk, cols, vals, *FM, E3, zeros=zeros)
    served = replace(E3, shift_grid=(0.0,), shift=0.0)
    e = analogs.estimate(bk, cols, vals, *FM, served, zeros=zeros)
    assert abs(math.exp(e3[3]) / 3.5 - 1.0) > 0.9
    assert abs(math.exp(e[3]) / 3.5 - 1.0) < 0.02


def test_without_a_zero_the_shift_changes_nothing() -> None:
    bk = _bank(A + B)
    cols, vals = np.array([0, 2]), np.array([math.log(1.0), math.log(5.0)])
    p3 = AnalogParams(tau=0.05, beta=0.3, mix=0.1, zero_penalty=5.0, anchor=True)
    p32 = AnalogParams(tau=0.05, beta=0.3, mix=0.1, zero_penalty=5.0, anchor=True, shift_grid=(0.0, 0.5))
    np.testing.assert_array_equal(analogs.estimate(bk, cols, vals, *FM, p3, zeros=np.zeros(0, dtype=np.int64)),
                                  analogs.estimate(bk, cols, vals, *FM, p32, zeros=np.zeros(0, dtype=np.int64)))


def test_engine_3_and_3_1_keep_their_parameters_and_tags() -> None:
    for v in ("3", "3.1"):
        assert all(p.shift is None and not p.shift_grid for _, p in ENGINE_VERSIONS[v].analogs)
        assert ":shift" not in ENGINE_VERSIONS[v].tag()
    assert AnalogParams(shift=1.0, shift_grid=(0.0, 0.5)).tag().endswith(":shift=0.0,0.5/1.0")
    # 3.2 = 3 but for services' scale-up, whose analogs only gain the shift steps
    v3, v32 = dict(ENGINE_VERSIONS["3"].analogs), dict(ENGINE_VERSIONS["3.2"].analogs)
    assert {k for k in v3 if v3[k] != v32[k]} == {"scale_up/service"}
    assert replace(v32["scale_up/service"], shift_grid=()) == v3["scale_up/service"]
    assert replace(ENGINE_VERSIONS["3.2"], analogs=ENGINE_VERSIONS["3"].analogs) == ENGINE_VERSIONS["3"]

"""Engine 3's rules of the analog fold-in (`analogs`): censored entries, collapse candidates, the
shrunk level offset and the evidence of the workload's other matrices — each on a crafted matrix
where engine 2's rule and engine 3's differ and engine 3's estimate is closer to a known truth."""

from __future__ import annotations

import math

import numpy as np
from sextant_contracts.model import Classification
from sextant_core.classification import analogs
from sextant_core.classification.analogs import AnalogParams, bank
from sextant_core.classification.classifier import _model_entries, _other
from sextant_core.classification.engine import ENGINE_VERSIONS
from sextant_core.classification.knowledge import KnowledgeBase

NAN = math.nan


def _bank(rows: list[list[float]], ids: list[str] | None = None) -> analogs.AnalogBank:
    y = np.array(rows, dtype=np.float64)
    mask = np.isfinite(y)
    return bank(np.where(mask, y, 0.0), mask, ids=ids)


def _rel(e: float, t: float) -> float:
    return abs(math.exp(e - t) - 1.0)


FM = (np.zeros(4), np.full(4, 0.5))  # a vague factor-model predictive (mixed in with share `mix`)


def test_engine_2_tags_and_parameters_are_unchanged() -> None:
    # the new fields default off and leave engine 2's tag (and so its version strings) as it was
    assert AnalogParams(tau=0.05, beta=0.3, mix=0.2).tag() == "an:tau=0.05:beta=0.3:mix=0.2"
    v2, v3 = ENGINE_VERSIONS["2"], ENGINE_VERSIONS["3"]
    assert all(p.zero_penalty is None and p.collapse is None and not p.shrink and not p.joint for _, p in v2.analogs)
    assert v3.tag() != v2.tag()
    assert [k for k, _ in v3.analogs] == [k for k, _ in v2.analogs]


def test_a_censored_entry_picks_the_analogs_that_also_served_nothing_there() -> None:
    # columns: 0 (the smallest configuration), 1 (observed), 2, 3 (hidden). Family A serves at
    # column 0 and is flat beyond 1; family B served nothing at 0 (the cell is absent) and doubles
    # at 2 and 3. A new B row: 0 measured at column 0, level 1.0 at column 1; truth at 2, 3: 1.69
    a = [[-1.5, 0.0, 0.0, 0.0], [-1.4, 0.1, 0.1, 0.1], [-1.6, -0.1, -0.1, -0.1]]
    b = [[NAN, 0.0, 0.69, 0.69], [NAN, 0.1, 0.79, 0.79], [NAN, -0.1, 0.59, 0.59]]
    bk = _bank(a + b)
    cols, vals, zeros = np.array([1]), np.array([1.0]), np.array([0])
    truth = 1.69
    e2 = analogs.estimate(bk, cols, vals, *FM, AnalogParams(tau=0.05, beta=None, mix=0.0))
    e3 = analogs.estimate(bk, cols, vals, *FM, AnalogParams(tau=0.05, beta=None, mix=0.0, zero_penalty=5.0),
                          zeros=zeros)
    assert _rel(e3[2], truth) < 0.01  # the B analogs lead
    assert _rel(e2[2], truth) > 0.4  # without the censored entry: the relative point leans to A's 1.0
    # without the rule the zeros are ignored: engine 2's estimate whatever `zeros` says
    same = analogs.estimate(bk, cols, vals, *FM, AnalogParams(tau=0.05, beta=None, mix=0.0), zeros=zeros)
    np.testing.assert_array_equal(same, e2)


def test_the_collapse_candidate_bounds_the_error_where_the_row_collapses() -> None:
    # family A is flat on every column; family C (the new row's shape at columns 0 and 1) lacks
    # column 3: it served nothing there. The new row's truth at 3 is 1 unit (log 0) against a
    # level of ~1 000 (e^6.9): engine 2 predicts A's level, ~10³ times too high
    a = [[6.9, 6.9, 6.9, 6.9], [7.0, 7.0, 7.0, 7.0]]
    c = [[6.9, 6.2, 6.0, NAN], [7.0, 6.3, 6.1, NAN], [6.8, 6.1, 5.9, NAN]]
    bk = _bank(a + c)
    cols, vals = np.array([0, 1]), np.array([6.9, 6.2])
    truth = 0.0
    p2 = AnalogParams(tau=0.3, beta=None, mix=0.0)
    p3 = AnalogParams(tau=0.3, beta=None, mix=0.0, collapse=3.0, collapse_depth=7.0)
    e2 = analogs.estimate(bk, cols, vals, *FM, p2)
    e3 = analogs.estimate(bk, cols, vals, *FM, p3)
    assert _rel(e2[3], truth) > 500.0
    assert _rel(e3[3], truth) <= 1.0  # at most 100 %: the candidate sits below the truth
    assert e3[3] == 6.2 - 7.0  # the row's lowest entry minus the depth
    # a cell every analog has keeps engine 2's estimate
    assert e3[2] == e2[2]


def test_the_collapse_candidate_needs_weight_to_move_the_estimate() -> None:
    # the analogs that lack column 3 fit the new row badly: their candidate, damped by
    # exp(−collapse) on top, leaves the estimate with the well-fitting analogs
    a = [[0.0, 0.0, 0.0, 0.0], [0.1, 0.1, 0.1, 0.1]]
    c = [[0.0, -2.0, 0.0, NAN]]
    bk = _bank(a + c)
    e3 = analogs.estimate(bk, np.array([0, 1]), np.array([0.0, 0.0]), *FM,
                          AnalogParams(tau=0.1, beta=None, mix=0.0, collapse=3.0))
    assert abs(e3[3] - 0.0) < 0.11


def test_the_shrunk_offset_keeps_a_shared_unit_level() -> None:
    # rows share one unit and every analog has the same absolute values; the new row's entries
    # are the analogs' plus measurement noise (+0.05 on both), its hidden truth the analogs' own
    rows = [[0.0, 0.2, 0.5, 0.4]] * 3
    bk = _bank(rows)
    cols, vals = np.array([0, 1]), np.array([0.05, 0.25])
    p2 = AnalogParams(tau=0.05, beta=0.05, mix=0.0)
    p3 = AnalogParams(tau=0.05, beta=0.05, mix=0.0, shrink=True)
    e2 = analogs.estimate(bk, cols, vals, *FM, p2)
    e3 = analogs.estimate(bk, cols, vals, *FM, p3)
    assert abs(e2[2] - 0.55) < 1e-9  # the raw offset carries the noise to every hidden cell
    k = 2 / 0.05 ** 2
    assert abs(e3[2] - (0.5 + 0.05 * k / (k + 1 / 0.05 ** 2))) < 1e-9
    assert abs(e3[2] - 0.5) < abs(e2[2] - 0.5)


def test_the_other_matrices_tell_two_families_apart() -> None:
    # heterogeneity rows of families F and G agree on the observed platforms and differ on the
    # hidden one; their scale-up rows differ. The new row's scale-up entries are G's
    ids = ["f1", "f2", "g1", "g2"]
    het = _bank([[0.0, 0.1, 0.0], [0.0, 0.1, 0.05], [0.0, 0.1, 0.8], [0.0, 0.1, 0.85]], ids)
    up = _bank([[0.0, 0.7, 1.4], [0.0, 0.7, 1.35], [0.0, 0.1, 0.1], [0.0, 0.12, 0.1]], ids)
    fit_up = analogs.evidence(up, np.array([0, 1]), np.array([3.0, 3.11]), tau=0.02, beta=None)
    assert max(fit_up.values()) == 0.0 and min(fit_up["g1"], fit_up["g2"]) > -1 and fit_up["f1"] < -100
    cols, vals = np.array([0, 1]), np.array([2.0, 2.1])
    truth = 2.0 + 0.825
    alone = analogs.estimate(het, cols, vals, *FM, AnalogParams(tau=0.05, beta=None, mix=0.0))
    joint = analogs.estimate(het, cols, vals, *FM, AnalogParams(tau=0.05, beta=None, mix=0.0, joint=0.1),
                             other=fit_up)
    assert _rel(joint[2], truth) < 0.05
    assert _rel(alone[2], truth) > 0.4  # alone the relative point leans to the lower family F
    # `_other` sums the other matrices' fits; a row absent from one gets NO_EVIDENCE there
    summed = _other({Classification.SCALE_UP: {"a": -1.0, "b": 0.0}, Classification.INTERFERENCE: {"a": 0.0},
                     Classification.HETEROGENEITY: {"a": -5.0}}, Classification.HETEROGENEITY)
    assert summed == {"a": -1.0, "b": analogs.NO_EVIDENCE}


def test_a_measured_zero_reaches_the_analogs_as_a_censored_column() -> None:
    kb = KnowledgeBase().append(Classification.SCALE_UP, "service", "s1", [("c1", 5.0), ("c2", 9.0), ("c4", 12.0)])
    m = kb.matrix(Classification.SCALE_UP, "service")
    assert m is not None
    observed = [("c1", 0.0), ("c4", 10.0)]
    ci, z, zeros = _model_entries(m, 3, {"c4": 10.0}, observed)
    assert list(ci) == [m.index["c4"]] and list(zeros) == [m.index["c1"]]
    np.testing.assert_allclose(z, [math.log(10.0)])
    # a column measured 0 once and positive once is known, not censored
    _, _, zeros2 = _model_entries(m, 3, {"c1": 3.0, "c4": 10.0}, [("c1", 0.0), ("c1", 3.0), ("c4", 10.0)])
    assert len(zeros2) == 0


def test_the_anchored_offset_ignores_an_entry_near_the_bound() -> None:
    # a service row is capacity minus a constant: with capacity 1, 4, 8 (×1 000) and a constant of
    # 990, one core serves 10, four 3 010, eight 7 010. The analog (constant 0) and the new row
    # agree at 4 and 8 cores up to the bound; the mean offset of ln-entries is dragged by the
    # 1-core entry, the anchored one is the 4-core entry's
    analog = [[math.log(1000.0), math.log(4000.0), math.log(8000.0), math.log(8000.0)]]
    bk = _bank(analog)
    cols, vals = np.array([0, 1]), np.array([math.log(10.0), math.log(3010.0)])
    truth = math.log(7010.0)
    p2 = AnalogParams(tau=0.05, beta=None, mix=0.0)
    p3 = AnalogParams(tau=0.05, beta=None, mix=0.0, anchor=True)
    e2 = analogs.estimate(bk, cols, vals, *FM, p2)
    e3 = analogs.estimate(bk, cols, vals, *FM, p3)
    assert _rel(e2[2], truth) > 0.8  # predicted ~0.1 of the truth
    assert _rel(e3[2], truth) < 0.2
    # a multiplicative row: the same estimate either way
    m = np.array([math.log(2000.0), math.log(8000.0)])
    np.testing.assert_allclose(analogs.estimate(bk, cols, m, *FM, p3)[2], analogs.estimate(bk, cols, m, *FM, p2)[2])

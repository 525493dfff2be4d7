"""Analog fold-in (`analogs`): the relative-error point estimate, the analog posterior on crafted
matrices where the factor fold-in is off, the level term, and engine versions."""

from __future__ import annotations

import numpy as np
from sextant_core.classification import analogs
from sextant_core.classification.analogs import AnalogParams, bank, weighted_relative_median
from sextant_core.classification.engine import ENGINE_VERSIONS, EngineParams
from sextant_core.classification.factorize import train
from sextant_core.classification.foldin import fold_in
from sextant_core.classification.params import FitParams


def _rel_loss(e: float, t: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(w * np.abs(e / t - 1.0)))


def test_relative_median_minimises_the_relative_error() -> None:
    # two equally likely truths, 1 and 100: the plain median sits anywhere in [1, 100] (loss up
    # to 49.5 at 100); the relative-error minimiser is 1 (loss 0.495)
    z = np.log(np.array([1.0, 100.0]))
    w = np.array([0.5, 0.5])
    e = float(np.exp(weighted_relative_median(z, w)))
    assert e == 1.0
    t = np.exp(z)
    grid = np.exp(np.linspace(-1, 5, 601))
    assert _rel_loss(e, t, w) <= min(_rel_loss(g, t, w) for g in grid) + 1e-12


def test_relative_median_random_posteriors_beat_the_grid() -> None:
    r = np.random.default_rng(3)
    for _ in range(20):
        z = r.normal(size=12) * 1.5
        w = r.random(12)
        w /= w.sum()
        e = float(np.exp(weighted_relative_median(z, w)))
        t = np.exp(z)
        grid = np.exp(np.linspace(z.min() - 1, z.max() + 1, 2001))
        assert _rel_loss(e, t, w) <= min(_rel_loss(g, t, w) for g in grid) + 1e-9


def _collapse_world(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of two families in log space: `flat` (every column near the row's level) and
    `collapse` (column 5 two orders of magnitude below the level, a service near its latency
    bound on a slow platform); the observed columns 0 and 1 differ by 0.3 between the families."""
    r = np.random.default_rng(seed)
    level = r.normal(size=n) * 0.5
    fam = np.arange(n) % 2
    shape = np.where(fam[:, None] == 0, np.array([0, 0, 0.1, 0.2, 0.1, 0.0]),
                     np.array([0, 0.3, 0.2, 0.1, 0.3, -4.6]))
    return level[:, None] + shape + r.normal(size=(n, 6)) * 0.01, fam


def test_analogs_find_the_collapsed_cell_the_factor_model_smooths() -> None:
    y, _ = _collapse_world(40, 1)
    mask = np.ones_like(y, dtype=bool)
    model = train(y, mask, FitParams(rank=1)).model
    b = bank(y, mask)
    truth, fam = _collapse_world(40, 2)
    err_fm, err_an = [], []
    for u in range(40):
        cols = np.array([0, 1])
        est = fold_in(model, cols, truth[u, cols])
        an = analogs.estimate(b, cols, truth[u, cols], est.mean, est.std, AnalogParams(tau=0.05))
        hidden = [2, 3, 4, 5]
        err_fm.append(np.mean(np.abs(np.exp(est.mean[hidden] - truth[u, hidden]) - 1)))
        err_an.append(np.mean(np.abs(np.exp(an[hidden] - truth[u, hidden]) - 1)))
    assert np.mean(err_an) < 0.05
    assert np.mean(err_an) < 0.25 * np.mean(err_fm)


def test_level_term_tells_families_apart_when_shapes_agree() -> None:
    # two families with the same observed shape but different levels (units shared: QPS) and a
    # hidden column that differs by 1.0 (in log space): only the level says which family a new row is
    r = np.random.default_rng(5)
    n = 40
    fam = np.arange(n) % 2
    level = np.where(fam == 0, 0.0, 3.0) + r.normal(size=n) * 0.1
    y = level[:, None] + np.where(fam[:, None] == 0, np.array([0.0, 0.2, 0.0]), np.array([0.0, 0.2, 1.0]))
    mask = np.ones_like(y, dtype=bool)
    b = bank(y, mask)
    cols = np.array([0, 1])
    new = np.array([3.05, 3.25])  # a family-1 row: hidden truth 4.05
    fm_mean, fm_std = np.array([3.05, 3.25, 2.75]), np.full(3, 0.3)
    flat = analogs.estimate(b, cols, new, fm_mean, fm_std, AnalogParams(tau=0.05, beta=None, mix=0.0))
    lev = analogs.estimate(b, cols, new, fm_mean, fm_std, AnalogParams(tau=0.05, beta=0.3, mix=0.0))
    assert abs(lev[2] - 4.05) < 0.15
    assert abs(flat[2] - 4.05) > 0.5  # the relative-error point leans to the lower family


def test_without_level_term_a_scaled_row_scales_its_estimate() -> None:
    y, _ = _collapse_world(30, 3)
    mask = np.ones_like(y, dtype=bool)
    b = bank(y, mask)
    cols = np.array([0, 1])
    vals = y[4, cols] + 0.01
    fm = np.zeros(6)
    sd = np.full(6, 0.2)
    p = AnalogParams(tau=0.05, beta=None, mix=0.0)
    base = analogs.estimate(b, cols, vals, fm, sd, p)
    shifted = analogs.estimate(b, cols, vals + np.log(7.0), fm, sd, p)
    np.testing.assert_allclose(shifted[2:], base[2:] + np.log(7.0), atol=1e-12)


def test_no_analog_falls_back_to_the_factor_models_relative_point() -> None:
    b = bank(np.zeros((3, 4)), np.array([[1, 1, 1, 0]] * 3, dtype=bool))
    fm_mean, fm_std = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.1, 0.5, 0.0, 0.5])
    out = analogs.estimate(b, np.array([3]), np.array([4.0]), fm_mean, fm_std, AnalogParams())
    # the relative-error point of N(m, s²) in log space sits near m − s² (exact for the log-normal)
    assert np.all(out[:2] < fm_mean[:2])
    assert abs(out[1] - (2.0 - 0.25)) < 0.05
    assert out[2] == 3.0


def test_engine_version_1_is_the_old_default() -> None:
    # logs recorded before the analogs replay with engine 1: its parameters and tag are unchanged
    assert ENGINE_VERSIONS["1"] == EngineParams()
    assert ENGINE_VERSIONS["1"].analog_params("heterogeneity/service") is None
    assert ":an" not in EngineParams().tag() and "an:tau" not in EngineParams().tag()
    v2 = ENGINE_VERSIONS["2"]
    assert v2.analog_params("heterogeneity/service") is not None
    assert v2.tag() != EngineParams().tag()


def test_sextant_8_2_classifies_with_engine_3_8_with_2_and_earlier_versions_with_engine_1() -> None:
    from sextant_core.profiles import policy_set

    assert policy_set("sextant").classifier.params == ENGINE_VERSIONS["3"]  # type: ignore[attr-defined]
    assert policy_set("sextant@8").classifier.params == ENGINE_VERSIONS["2"]  # type: ignore[attr-defined]
    for name in ("sextant@7", "sextant@6.1", "paragon", "reservation-paragon"):
        assert policy_set(name).classifier.params == ENGINE_VERSIONS["1"], name  # type: ignore[attr-defined]

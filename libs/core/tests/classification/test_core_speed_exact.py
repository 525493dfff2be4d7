"""The decision core's exact speed-ups (docs/platform/replay.md, "Decision core") compute what the
previous code computed, bit for bit: each previous implementation is kept here as the reference
and compared on random inputs, edge cases included."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from sextant_contracts.model import INTERFERENCE_SOURCES, Classification
from sextant_core.classification import analogs, engine
from sextant_core.classification.analogs import AnalogBank, AnalogParams, bank
from sextant_core.classification.knowledge import Matrix
from sextant_core.classification.normalise import Normalisation
from sextant_core.classification.rowlog import CHUNK

HET = Classification.HETEROGENEITY


def _reference_dense(m: Matrix, n: int | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """`Matrix.dense` before the scatter: one row at a time."""
    n = len(m.rows) if n is None else n
    width = m.width_at(n)
    y = np.zeros((n, width))
    mask = np.zeros((n, width), dtype=bool)
    ids: list[str] = []
    for i, row in enumerate(m.rows.head(n)):
        cols = list(row.cols)
        y[i, cols] = row.values
        mask[i, cols] = True
        ids.append(row.row_id)
    return y, mask, ids


def _random_matrix(rng: random.Random, rows: int, norm: Normalisation = Normalisation.LOG) -> Matrix:
    m = Matrix(classification=HET, group="all", normalisation=norm)
    for i in range(rows):
        cells = [(f"c{rng.randrange(12)}", rng.choice([rng.uniform(1e-3, 1e4), 1.0, 0.5, 0.0, -1.0]))
                 for _ in range(rng.randint(0, 6))]
        m = m.with_row(f"w{i}", cells)
    return m


@pytest.mark.parametrize("seed", range(6))
def test_dense_scatters_the_rows_the_loop_wrote(seed: int) -> None:
    rng = random.Random(seed)
    m = _random_matrix(rng, rng.choice([0, 1, 7, CHUNK + 3, 2 * CHUNK]))
    for n in sorted({0, len(m), len(m) // 2, min(1, len(m)), max(len(m) - 1, 0)}):
        y, mask, ids = m.dense(n)
        ry, rmask, rids = _reference_dense(m, n)
        assert y.shape == ry.shape and y.dtype == ry.dtype and mask.dtype == rmask.dtype
        assert y.tobytes() == ry.tobytes() and mask.tobytes() == rmask.tobytes() and ids == rids
    y, mask, ids = m.dense()
    assert y.tobytes() == _reference_dense(m)[0].tobytes()


def test_the_engines_dense_is_memoised_read_only_and_keyed_by_the_prefix() -> None:
    engine.clear_memo()
    rng = random.Random(7)
    m = _random_matrix(rng, 60)
    assert len(m) > 31  # rows with no valid cell are not appended
    y, mask, ids = engine.dense(m, 30)
    ry, rmask, rids = _reference_dense(m, 30)
    assert y.tobytes() == ry.tobytes() and mask.tobytes() == rmask.tobytes() and ids == tuple(rids)
    assert engine.dense(m, 30)[0] is y  # the memo
    assert not y.flags.writeable and not mask.flags.writeable
    with pytest.raises(ValueError):
        y[0, 0] = 1.0
    # a matrix with other rows under the same key and count: another digest, other arrays
    other = _random_matrix(random.Random(8), 60)
    assert engine.dense(other, 30)[0].tobytes() == _reference_dense(other, 30)[0].tobytes()
    assert engine.dense(m, 31)[0].shape[0] == 31
    engine.clear_memo()
    assert engine.dense(m, 30)[0] is not y


# --- normalise.backward: the clip ufunc called directly -------------------------------------------


def _reference_backward(kind: Normalisation, z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    if kind is Normalisation.LOG:
        return np.exp(np.clip(z, -700.0, 700.0))
    if kind is Normalisation.SCORE:
        return np.clip(z * 100.0, 0.0, 100.0)
    return z.copy()


@pytest.mark.parametrize("kind", list(Normalisation))
def test_backward_equals_the_np_clip_path(kind: Normalisation) -> None:
    from sextant_core.classification.normalise import backward

    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 700.0, -700.0, 701.0, -701.0, 1e308, -1e308,
                        5e-324, 1.0, 0.5, 1.5, -0.01])
    for z in (special, rng.normal(0, 3, 500), rng.uniform(-1000, 1000, 77), rng.normal(0, 1, 1), np.zeros(0),
              special.reshape(4, 4), [1.25], 0.75):
        with np.errstate(over="ignore"):
            got, ref = backward(kind, z), _reference_backward(kind, np.asarray(z))
        assert got.shape == ref.shape and got.dtype == ref.dtype and got.tobytes() == ref.tobytes()


# --- engine.fit_params: remembered per parameter object --------------------------------------------


def test_fit_params_are_remembered_per_parameter_object_and_equal_the_replace() -> None:
    from dataclasses import replace

    for version, params in engine.ENGINE_VERSIONS.items():
        for norm, key in ((Normalisation.LOG, "heterogeneity/service"), (Normalisation.LOG, "scale_up/batch"),
                          (Normalisation.SCORE, "interference/all")):
            cls, group = key.split("/")
            m = Matrix(classification=Classification(cls), group=group, normalisation=norm)
            prior = ((params.score_bias_prior and norm is Normalisation.SCORE) or key in params.bias_prior_matrices)
            ref = replace(params.fit, row_bias_prior=prior)
            got = engine.fit_params(m, params)
            assert got == ref and got.tag() == ref.tag(), version
            assert engine._memo_key(m, 0, 1, params)[3] == ref.tag()
            # an equal-looking but different object is looked up by itself, not by a reused id
            other = replace(params, fit=replace(params.fit, reg=params.fit.reg * 2))
            assert engine.fit_params(m, other).reg == params.fit.reg * 2
            assert engine.fit_params(m, params) == ref


# --- the adaptive plan's prior covariances: computed once per prior rows ---------------------------


def test_the_plans_prior_covariances_equal_a_fresh_plans() -> None:
    from sextant_contracts import events as ev
    from sextant_core.profiling.adaptive import AdaptiveProfilingPlan
    from sextant_core.state import fold
    from sextant_core.testing.builders import server

    rng = np.random.default_rng(0)
    events: list[ev.Event] = [server(f"{p.lower()}1", platform=p, cores=16, memory_gb=64) for p in "HMST"]
    sources = [s.value for s in INTERFERENCE_SOURCES]
    for i in range(12):
        het = {"H": 1e9, **{p: 1e9 * float(np.exp(0.3 * rng.normal())) for p in "MST"}}
        tol = {s: float(np.clip(50 + 9 * rng.normal(), 0, 100)) for s in sources}
        events += [ev.KnowledgeSeeded(at=0, classification=HET, group="batch", row_id=f"h{i}", values=het),
                   ev.KnowledgeSeeded(at=0, classification=Classification.INTERFERENCE, group="batch",
                                      row_id=f"i{i}", values=tol, caused=dict(tol))]
    st = fold(events)
    plan = AdaptiveProfilingPlan()
    cores = {"M": 16, "S": 16, "T": 16}
    first, _ = plan.priors(st, "batch", "H", ["M", "S", "T"], cores)
    again, _ = plan.priors(st, "batch", "H", ["M", "S", "T"], cores)
    fresh, _ = AdaptiveProfilingPlan().priors(st, "batch", "H", ["M", "S", "T"], cores)
    assert set(first) == set(fresh) == {HET, Classification.INTERFERENCE}
    for c in first:
        assert again[c][0] is first[c][0]  # remembered
        assert first[c][0].tobytes() == fresh[c][0].tobytes() and not first[c][0].flags.writeable
    # fewer platforms: another prior, not the remembered one
    fewer, _ = plan.priors(st, "batch", "H", ["M", "S"], {"M": 16, "S": 16})
    assert fewer[HET][0].shape == (2, 2)


# --- analogs: np.unique without its sort, the per-cell element-wise work done for every column ------

def test_unique_equals_np_unique() -> None:
    rng = np.random.default_rng(2)
    cases = [np.zeros(0, dtype=np.int64), np.array([3]), np.array([5, 5, 5]), np.array([2, 0, 1, 0])]
    cases += [rng.integers(0, int(rng.integers(1, 40)), int(rng.integers(1, 12))) for _ in range(300)]
    for c in cases:
        c = np.asarray(c, dtype=np.int64)
        got, want = analogs._unique(c), np.unique(c)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _reference_estimate(b: AnalogBank, columns: np.ndarray, values: np.ndarray, fm_mean: np.ndarray,
                        fm_std: np.ndarray, params: AnalogParams, zeros: np.ndarray | None = None,
                        other: dict[str, float] | None = None) -> np.ndarray:
    """`analogs.estimate` before: one hidden cell at a time (its analog rows as `_analogs` has them;
    `_fit`'s one change is tested apart: `_unique`)."""
    n = len(fm_mean)
    out = np.array(fm_mean, dtype=np.float64, copy=True)
    got = analogs._analogs(b, columns, values, params, zeros, other)  # unchanged: the analog rows
    if got is None:
        return out if len(columns) == 0 or b.y.shape[0] == 0 else analogs._fm_only(out, fm_mean, fm_std)
    ya, ma, lw, off, uniq, obs = got
    width = b.y.shape[1]
    seen = set(int(c) for c in uniq)
    for i in range(n):
        if i in seen:
            continue
        fz = fm_mean[i] + fm_std[i] * analogs._Z if np.isfinite(fm_std[i]) else np.full(1, fm_mean[i])
        has = ma[:, i] if i < width else np.zeros(len(lw), dtype=bool)
        if params.collapse is not None and i < width:
            out[i] = analogs._with_collapse(ya[has, i] + off[has], lw, has, float(obs.min()), fz, params)
            continue
        if not has.any():
            out[i] = analogs.weighted_relative_median(fz, np.full(len(fz), 1.0 / len(fz)))
            continue
        lh = lw[has]
        w = np.exp(lh - lh.max())
        w = w / w.sum()
        z = np.concatenate([ya[has, i] + off[has], fz])
        ww = np.concatenate([(1.0 - params.mix) * w, np.full(len(fz), params.mix / len(fz))])
        out[i] = analogs.weighted_relative_median(z, ww)
    return out


_PARAMS = [AnalogParams(), AnalogParams(tau=0.15, beta=None, mix=0.5), AnalogParams(tau=0.05, beta=0.3, mix=0.0),
           AnalogParams(tau=0.08, beta=0.1, mix=0.2, shrink=True, joint=0.1),
           AnalogParams(tau=0.05, beta=0.3, mix=0.1, zero_penalty=5.0, joint=0.1, anchor=True),
           AnalogParams(tau=0.05, beta=0.3, mix=0.2, zero_penalty=5.0, collapse=3.0, collapse_depth=7.0),
           AnalogParams(tau=0.02, beta=1.0, mix=1.0)]


@pytest.mark.parametrize("seed", range(8))
def test_analog_estimate_equals_the_previous_code_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(40):
        rows, width = int(rng.integers(0, 40)), int(rng.integers(1, 9))
        y = rng.normal(0, 2, (rows, width))
        mask = rng.random((rows, width)) < rng.uniform(0.3, 1.0)
        ids = [f"w{i}" for i in range(rows)]
        b = bank(y, mask, int(rng.integers(1, 4)), ids=ids if rng.random() < 0.8 else None)
        n = width + int(rng.integers(0, 3))  # the model may have columns the bank lacks
        s = int(rng.integers(0, min(n, 4) + 1))
        cols = rng.choice(n, size=s, replace=rng.random() < 0.3).astype(np.int64)
        vals = rng.normal(0, 2, s)
        if s and rng.random() < 0.2:
            vals[0] = -0.0
        fm_mean = rng.normal(0, 2, n)
        fm_std = np.abs(rng.normal(0, 1, n))
        if rng.random() < 0.3:
            fm_std[rng.integers(0, n)] = np.inf
        zeros = rng.choice(n + 1, size=int(rng.integers(0, 3)), replace=False).astype(np.int64)
        other = {i: float(rng.normal(0, 5)) for i in ids if rng.random() < 0.7}
        for p in _PARAMS:
            for z, o in ((None, None), (zeros, other), (zeros, {})):
                with np.errstate(all="ignore"):
                    want = _reference_estimate(b, cols, vals, fm_mean, fm_std, p, z, o)
                    have = analogs.estimate(b, cols, vals, fm_mean, fm_std, p, z, o)
                assert have.tobytes() == want.tobytes()
                checked += 1
    assert checked == 40 * len(_PARAMS) * 3


# --- fold_in: the inverse's LAPACK gufunc called directly --------------------------------------------


def test_inv_equals_numpy_linalg_inv_and_refuses_a_singular_matrix() -> None:
    from sextant_core.classification.factorize import _inv

    rng = np.random.default_rng(11)
    for d in range(1, 7):
        for _ in range(50):
            a = rng.normal(size=(d, d))
            a = a @ a.T + rng.uniform(0, 1) * np.eye(d) if rng.random() < 0.7 else a
            assert _inv(a).tobytes() == np.linalg.inv(a).tobytes()
    stack = rng.normal(size=(5, 3, 3))
    assert _inv(stack).tobytes() == np.linalg.inv(stack).tobytes()
    with pytest.raises(np.linalg.LinAlgError):
        _inv(np.zeros((3, 3)))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(np.zeros((3, 3)))
    nan = np.full((2, 2), np.nan)
    assert _inv(nan).tobytes() == np.linalg.inv(nan).tobytes()


# --- train from a shared `prepare` (rank cross-validation) -------------------------------------------


def _fit_bytes(fit: object) -> list[bytes]:
    from sextant_core.classification.factorize import Fit

    assert isinstance(fit, Fit)
    m = fit.model
    arrays = [m.col_bias, m.col_factors, m.prior_mean, m.prior_cov, fit.row_bias, fit.row_factors,
              np.array([m.mu, m.bias_mean, m.noise_var, m.train_rmse, m.epochs, m.rows, m.rank])]
    if m.joint_mean is not None and m.joint_cov is not None:
        arrays += [m.joint_mean, m.joint_cov]
    return [np.asarray(a, dtype=np.float64).tobytes() for a in arrays]


def _outcome(run: Callable[..., object], *args: object, **kwargs: object) -> list[bytes] | str:
    """The fit's bytes, or the error it raised (a singular system raises in both paths alike)."""
    try:
        return _fit_bytes(run(*args, **kwargs))
    except np.linalg.LinAlgError as exc:
        return f"LinAlgError: {exc}"


@pytest.mark.parametrize("seed", range(6))
def test_train_from_a_prepared_start_equals_a_fresh_train(seed: int) -> None:
    from dataclasses import replace

    from sextant_core.classification.factorize import prepare, train
    from sextant_core.classification.params import FitParams

    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(8, 60)), int(rng.integers(1, 9))
    y = rng.normal(size=(m, 2)) @ rng.normal(size=(2, n)) + rng.normal(0, 0.1, (m, n))
    mask = rng.random((m, n)) < 0.6
    mask[0] = True  # every column observed
    mask[np.arange(m), rng.integers(0, n, m)] = True  # no empty row (its unpenalised bias is singular)
    fits = 0
    for column_bias, bias_prior in ((True, False), (False, False), (True, True)):
        base = FitParams(column_bias=column_bias, row_bias_prior=bias_prior, max_epochs=int(rng.integers(0, 30)))
        pre = prepare(y, mask, base)
        for k in range(5):
            for reg in (0.01, 0.3):
                p = replace(base, rank=k, reg=reg)
                got = _outcome(train, y, mask, p, prepared=pre)
                assert got == _outcome(train, y, mask, p)
                fits += isinstance(got, list)
    assert fits == 30  # every candidate trained (none singular)
    # a start prepared for other arrays or bias settings is not used
    pre = prepare(y, mask, FitParams())
    other = mask.copy()
    other[1] = ~other[1] | mask[0]
    p = FitParams(rank=2)
    assert _outcome(train, y, other, p, prepared=pre) == _outcome(train, y, other, p)
    p = FitParams(rank=2, reg_bias=0.1)
    assert _outcome(train, y, mask, p, prepared=pre) == _outcome(train, y, mask, p)
    assert not pre.fits(y, mask, p) and pre.fits(y, mask, FitParams(rank=3, reg=0.3))


def test_select_rank_with_prepared_folds_equals_training_each_candidate_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    from sextant_core.classification import selection
    from sextant_core.classification.params import FitParams

    rng = np.random.default_rng(5)
    m, n = 120, 8
    y = rng.normal(size=(m, 3)) @ rng.normal(size=(3, n)) + rng.normal(0, 0.05, (m, n))
    mask = rng.random((m, n)) < 0.5
    mask[:20] = True
    mask[np.arange(m), rng.integers(0, n, m)] = True  # no empty row (its bias is unpenalised)
    mask[np.arange(m), rng.integers(0, n, m)] = True
    keys = [f"w{i}" for i in range(m)]
    got = [selection.select_rank(y, mask, keys, FitParams(), regs=regs, patience=pat)
           for regs, pat in ((None, 2), (list(selection.REG_GRID), None))]
    real_train = selection.train
    monkeypatch.setattr(selection, "train", lambda y, mask, params, prepared=None: real_train(y, mask, params))
    want = [selection.select_rank(y, mask, keys, FitParams(), regs=regs, patience=pat)
            for regs, pat in ((None, 2), (list(selection.REG_GRID), None))]
    assert got == want and all(s.method == "cv" and len(s.table) > 3 for s in got)

"""The decision core's exact speed-ups (docs/platform/replay.md, "Decision core") compute what the
previous code computed, bit for bit: each previous implementation is kept here as the reference
and compared on random inputs, edge cases included."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sextant_contracts.model import INTERFERENCE_SOURCES, Classification
from sextant_core.classification import engine
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

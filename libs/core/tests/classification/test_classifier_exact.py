"""The classifier's faster joint-evidence path computes what the previous one computed, bit for bit
(replay re-derives every recorded `WorkloadClassified` byte for byte): `_other` against the
previous `math.fsum` comprehension, kept here as the reference, on random fits (0–3 matrices,
signed zeros, non-finite weights), and `classify` against the previous loop (every matrix's fit,
`_other` for every matrix) at every classification of the committed platform log."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sextant_contracts import events as ev
from sextant_contracts.model import Classification
from sextant_core.classification import analogs
from sextant_core.classification.classifier import (
    CLASSIFICATIONS,
    CollaborativeClassifier,
    _other,
    _with_platforms,
)
from sextant_core.classification.engine import ENGINE_VERSIONS, clear_memo
from sextant_core.classification.observations import CAUSED_PREFIX, TOLERATED_PREFIX, group_of
from sextant_core.policies import Classified
from sextant_core.state import evolve
from sextant_core.state.model import ClusterState, WorkloadState

FIXTURE = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "platform-log.jsonl.gz"


def _reference_other(fits: dict[Classification, dict[str, float]], cls: Classification) -> dict[str, float]:
    others = [f for c, f in fits.items() if c is not cls and f]
    ids = sorted({i for f in others for i in f})
    return {i: math.fsum(f.get(i, analogs.NO_EVIDENCE) for f in others) for i in ids}


def _bits(d: dict[str, float]) -> list[tuple[str, str]]:
    return [(k, v.hex() if not math.isnan(v) else "nan") for k, v in d.items()]


def _random_fit(rng: random.Random, ids: list[str], special: bool) -> dict[str, float]:
    out = {}
    for i in rng.sample(ids, rng.randint(0, len(ids))):
        v = -rng.expovariate(0.05) if rng.random() < 0.8 else rng.choice([0.0, -0.0, -50.0, -1e-300, -123.456])
        if special and rng.random() < 0.05:
            v = rng.choice([-math.inf, math.nan])
        out[i] = v
    return out


@pytest.mark.parametrize("special", [False, True])
def test_other_is_the_fsum_of_the_other_fits_bit_for_bit(special: bool) -> None:
    rng = random.Random(19)
    ids = [f"w{i}" for i in range(40)]
    sizes = {0: 0, 1: 0, 2: 0, 3: 0}
    for _ in range(400):
        fits = {c: _random_fit(rng, ids, special) for c in rng.sample(list(Classification), rng.randint(0, 4))}
        for cls in Classification:
            sizes[sum(1 for c, f in fits.items() if c is not cls and f)] += 1
            try:
                want = _reference_other(fits, cls)
            except ValueError:  # fsum refuses -inf + inf: so must the fast path
                with pytest.raises(ValueError):
                    _other(fits, cls)
                continue
            got = _other(fits, cls)
            assert list(got) == list(want)
            assert _bits(got) == _bits(want)
    assert all(sizes[n] > 50 for n in (0, 1, 2, 3))  # every branch exercised


def _reference_classify(clf: CollaborativeClassifier, state: ClusterState, w: WorkloadState) -> Classified:
    """`CollaborativeClassifier.classify` before: every matrix's fit, `_other` for every matrix."""
    kb = state.knowledge
    kind = w.kind.value
    pending = kb.pending_cells(w.workload_id)
    rows: dict[Classification, dict[str, float]] = {}
    conf: dict[str, float] = {}
    versions: dict[str, str] = {}
    joint = any(p.joint for _, p in clf.params.analogs)
    fits: dict[Classification, dict[str, float]] = {}
    for cls in CLASSIFICATIONS if joint else ():
        group = group_of(cls, kind)
        fits[cls] = clf.evidence(kb.matrix(cls, group), pending.get((cls, group), []))
    for cls in CLASSIFICATIONS:
        group = group_of(cls, kind)
        values, c, version = clf.estimate(kb.matrix(cls, group), pending.get((cls, group), []),
                                          _reference_other(fits, cls) if joint else None)
        rows[cls] = values
        conf[cls.value] = round(c, 6)
        versions[f"{cls.value}/{group}"] = version
    het = _with_platforms(rows[Classification.HETEROGENEITY], state)
    inter = rows[Classification.INTERFERENCE]
    return Classified(scale_up=rows[Classification.SCALE_UP], scale_out=rows[Classification.SCALE_OUT],
                      heterogeneity=het,
                      tolerated={k[len(TOLERATED_PREFIX):]: v for k, v in inter.items() if k.startswith(TOLERATED_PREFIX)},
                      caused={k[len(CAUSED_PREFIX):]: v for k, v in inter.items() if k.startswith(CAUSED_PREFIX)},
                      confidence=conf, model_versions=versions)


def _float_bits(x: Any) -> Any:
    if isinstance(x, float):
        return x.hex()
    if isinstance(x, dict):
        return {k: _float_bits(v) for k, v in x.items()}
    return x


@pytest.mark.parametrize("engine", ["2", "3"])
def test_classify_equals_the_previous_loop_at_every_classification_of_the_platform_log(engine: str) -> None:
    from sextant_cli.demo import read_recorded

    clf = CollaborativeClassifier(ENGINE_VERSIONS[engine])
    state = ClusterState()
    compared = joint_used = 0
    clear_memo()
    for env in read_recorded(FIXTURE):
        event = env.event()
        if isinstance(event, ev.WorkloadClassified) and event.workload_id in state.workloads:
            w = state.workloads[event.workload_id]
            got, want = clf.classify(state, w, None), _reference_classify(clf, state, w)  # type: ignore[arg-type]
            for name in ("scale_up", "scale_out", "heterogeneity", "tolerated", "caused", "confidence",
                         "model_versions"):
                assert _float_bits(getattr(got, name)) == _float_bits(getattr(want, name)), name
            compared += 1
            joint_used += any(p.joint for _, p in clf.params.analogs)
        state = evolve(state, event, env.position)
    assert compared >= 20
    assert (joint_used > 0) == (engine == "3")


def _reference_fit(b, columns, values, tau, beta, zeros, zero_penalty):  # type: ignore[no-untyped-def]
    """`analogs._fit` before (each observed column's mean by `numpy.mean`)."""
    cols = np.asarray(columns, dtype=np.int64)
    if len(cols) == 0 or b.y.shape[0] == 0:
        return None
    uniq = np.unique(cols)
    if not (uniq < b.y.shape[1]).all():
        return None
    ok = np.asarray(b.mask[:, uniq].all(axis=1), dtype=bool)
    if not ok.any():
        return None
    obs = np.array([float(np.mean(values[cols == c])) for c in uniq])
    d = obs[None, :] - b.y[:, uniq]
    off = d.mean(axis=1)
    lw = -((d - off[:, None]) ** 2).sum(axis=1) / (2.0 * tau ** 2)
    if beta is not None:
        lw = lw - off ** 2 / (2.0 * beta ** 2)
    if zero_penalty is not None and zeros is not None:
        for j in np.unique(np.asarray(zeros, dtype=np.int64)):
            if j < b.mask.shape[1]:
                lw = lw - zero_penalty * b.mask[:, j]
    return ok, lw, off, uniq, obs


def test_the_analog_fit_and_evidence_equal_the_previous_code_bit_for_bit() -> None:
    rng = np.random.default_rng(19)
    checked = 0
    for trial in range(300):
        m, n = int(rng.integers(1, 30)), int(rng.integers(2, 9))
        y = rng.normal(size=(m, n)) * 3
        mask = rng.random((m, n)) < 0.8
        b = analogs.bank(np.where(mask, y, 0.0), mask, 1, ids=[f"r{i}" for i in range(m)])
        k = int(rng.integers(1, 5))
        cols = rng.integers(0, n + (trial % 7 == 0), size=k)  # duplicates, sometimes an unknown column
        if trial % 3 == 0:
            cols = rng.permutation(n)[: min(k, n)]  # distinct, unsorted
        vals = rng.normal(size=len(cols))
        if trial % 11 == 0:
            vals[0] = -0.0
        zeros = rng.integers(0, n, size=2) if trial % 2 else None
        args = (b, cols, vals, 0.05, 0.3 if trial % 2 else None, zeros, 5.0 if trial % 4 else None)
        got, want = analogs._fit(*args), _reference_fit(*args)
        assert (got is None) == (want is None)
        if got is None:
            continue
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g.view(np.uint8), w.view(np.uint8))  # bit for bit (signed zeros too)
        ok, lw = want[0], want[1]
        top = float(lw[ok].max())
        ref = {b.ids[i]: float(lw[i] - top) for i in np.flatnonzero(ok)}
        ev_ = analogs.evidence(b, cols, vals, 0.05, 0.3 if trial % 2 else None, zeros, 5.0 if trial % 4 else None)
        assert list(ev_) == list(ref) and _bits(ev_) == _bits(ref)
        checked += 1
    assert checked > 100


def _reference_fold_in(model, columns, values):  # type: ignore[no-untyped-def]
    """`foldin.fold_in` before (features and prior terms computed on every call)."""
    from sextant_core.classification.foldin import RowEstimate, _prior_terms

    n = model.n_columns
    feats = np.empty((n, model.rank + 1))
    feats[:, 0] = 1.0
    feats[:, 1:] = model.col_factors
    if len(columns) == 0:
        z = np.concatenate([[model.bias_mean], model.prior_mean])
        return RowEstimate(mean=model.mu + model.col_bias + feats @ z, std=np.full(n, np.inf))
    x = feats[columns]
    t = np.asarray(values, dtype=np.float64) - model.mu - model.col_bias[columns]
    lam, lz = _prior_terms(model)
    a_inv = np.linalg.inv(lam + x.T @ x)
    z = a_inv @ (lz + x.T @ t)
    lev = np.einsum("ij,jk,ik->i", feats, a_inv, feats)
    return RowEstimate(mean=model.mu + model.col_bias + feats @ z, std=np.sqrt(model.noise_var * (1.0 + lev)))


@pytest.mark.parametrize("bias_prior", [False, True])
def test_fold_in_with_remembered_model_terms_equals_the_previous_code(bias_prior: bool) -> None:
    from sextant_core.classification.factorize import train
    from sextant_core.classification.foldin import fold_in
    from sextant_core.classification.params import FitParams

    rng = np.random.default_rng(7)
    models = []
    for k in range(4):
        y = rng.normal(size=(60, 6))
        mask = rng.random((60, 6)) < 0.9
        models.append(train(y, mask, FitParams(rank=k, row_bias_prior=bias_prior)).model)
    for _ in range(3):  # the second and third rounds hit the remembered terms
        for model in models:
            for cols in ([], [1], [0, 3], [2, 2, 5], [5, 0, 1, 4]):
                c = np.array(cols, dtype=np.int64)
                v = rng.normal(size=len(cols))
                got, want = fold_in(model, c, v), _reference_fold_in(model, c, v)
                assert np.array_equal(got.mean.view(np.uint8), want.mean.view(np.uint8))
                assert np.array_equal(got.std.view(np.uint8), want.std.view(np.uint8))

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
from sextant_core.classification import analogs, classifier
from sextant_core.classification.classifier import CollaborativeClassifier, _other
from sextant_core.classification.engine import ENGINE_VERSIONS, clear_memo
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


def _float_bits(x: Any) -> Any:
    if isinstance(x, float):
        return x.hex()
    if isinstance(x, dict):
        return {k: _float_bits(v) for k, v in x.items()}
    return x


def _reference_classify(clf: CollaborativeClassifier, state: ClusterState, w: WorkloadState,
                        monkeypatch: pytest.MonkeyPatch) -> Classified:
    """`classify` as before: with engine 3, every matrix's fit computed and `_other` (the `fsum`
    comprehension) passed to every matrix's estimate as a dict, read by `dict.get` — the current
    loop when every matrix is taken to read the others' fits (`_joint`) and none by bank row
    (`analogs.JointEvidence`)."""
    with monkeypatch.context() as m:
        m.setattr(classifier, "_joint", lambda *_: True)
        m.setattr(classifier, "_other_evidence", lambda fits, cls: _reference_other(
            {c: f.as_dict() for c, f in fits.items() if f is not None}, cls))
        return clf.classify(state, w, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["2", "3", "3.2"])
def test_classify_equals_the_previous_loop_at_every_classification_of_the_platform_log(
        engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from sextant_cli.demo import read_recorded

    clf = CollaborativeClassifier(ENGINE_VERSIONS[engine])
    state = ClusterState()
    compared = joint_used = 0
    by_row = []  # whether each joint read took the bank-row path (`analogs.JointEvidence`)
    current = classifier._other_evidence

    def spy(fits, cls):  # type: ignore[no-untyped-def]
        out = current(fits, cls)
        by_row.append(isinstance(out, analogs.JointEvidence))
        return out

    monkeypatch.setattr(classifier, "_other_evidence", spy)
    clear_memo()
    for env in read_recorded(FIXTURE):
        event = env.event()
        if isinstance(event, ev.WorkloadClassified) and event.workload_id in state.workloads:
            w = state.workloads[event.workload_id]
            got = clf.classify(state, w, None)  # type: ignore[arg-type]
            want = _reference_classify(clf, state, w, monkeypatch)
            for name in ("scale_up", "scale_out", "heterogeneity", "tolerated", "caused", "confidence",
                         "model_versions"):
                assert _float_bits(getattr(got, name)) == _float_bits(getattr(want, name)), name
            compared += 1
            joint_used += any(p.joint for _, p in clf.params.analogs)
        state = evolve(state, event, env.position)
    assert compared >= 20
    assert (joint_used > 0) == (engine != "2")
    assert (sum(by_row) > 0) == (engine != "2")  # the bank-row path was compared


def _reference_obs(columns, values):  # type: ignore[no-untyped-def]
    """`analogs._fit`'s observed values before: each observed column's mean by `numpy.mean` (the
    rest of `_fit` is unchanged code computed from them)."""
    cols = np.asarray(columns, dtype=np.int64)
    return np.array([float(np.mean(values[cols == c])) for c in np.unique(cols)])


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
        got = analogs._fit(*args)
        if got is None:
            continue
        obs, want = got[4], _reference_obs(cols, vals)
        assert obs.dtype == want.dtype and obs.shape == want.shape
        assert np.array_equal(obs.view(np.uint8), want.view(np.uint8))  # bit for bit (signed zeros too)
        ok, lw = got[0], got[1]
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

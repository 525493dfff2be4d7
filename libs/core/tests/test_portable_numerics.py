"""Logs written on one CPU replay on another: model hashes round away BLAS last bits, and events
written before the numerics were pinned are compared up to last-bit differences (replay.py)."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
from sextant_contracts import codec
from sextant_contracts import events as ev
from sextant_contracts.upcasters import upcast
from sextant_core.classification.factorize import train
from sextant_core.classification.params import FitParams
from sextant_core.replay import ReplayReport, _same


def _model():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    y = rng.normal(size=(12, 6))
    return train(y, np.ones_like(y, dtype=bool), FitParams(rank=2)).model


def _nudged(model, eps: float):  # type: ignore[no-untyped-def]
    """`model` with every parameter moved by `eps` relative: what another BLAS kernel does."""
    return dataclasses.replace(model, col_factors=model.col_factors * (1 + eps),
                               col_bias=model.col_bias * (1 + eps), prior_cov=model.prior_cov * (1 + eps))


def test_the_model_hash_ignores_last_bit_differences_but_not_real_ones() -> None:
    m = _model()
    assert _nudged(m, 4e-16).content_hash() == m.content_hash()
    assert _nudged(m, 1e-6).content_hash() != m.content_hash()
    assert _nudged(m, 4e-16).content_hash("f8-bytes") != m.content_hash("f8-bytes")


def test_the_legacy_hash_is_the_raw_bytes_hash_logs_recorded() -> None:
    m = _model()
    h = hashlib.sha256(f"{m.n_columns}:{m.rank}:{m.rows}:{m.epochs}".encode())
    for a in (np.array([m.mu, m.bias_mean, m.noise_var, m.train_rmse]), m.col_bias, m.col_factors,
              m.prior_mean, m.prior_cov):
        h.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
    if m.bias_prior and m.joint_mean is not None and m.joint_cov is not None:
        h.update(b"bias-prior")
        for a in (m.joint_mean, m.joint_cov):
            h.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
    assert m.content_hash("f8-bytes") == h.hexdigest()


def test_events_of_the_first_schema_are_marked_legacy() -> None:
    for name in ("ModelRetrained", "WorkloadClassified"):
        assert upcast(name, 1, {"at": 0.0})["fingerprint"] == ev.LEGACY_FINGERPRINT
    assert ev.ModelRetrained.SCHEMA_VERSION == ev.WorkloadClassified.SCHEMA_VERSION == 2


def _retrained(**kw: object) -> ev.ModelRetrained:
    base = {"at": 1.0, "classification": "heterogeneity", "model_version": "r30-k2-0123456789ab",
            "content_hash": "0123456789ab" + "0" * 52, "rows": 30, "columns": 3, "rank": 2, "trigger_position": 7}
    return ev.ModelRetrained.model_validate({**base, **kw})


def test_replay_forgives_unpinned_numerics_only_in_legacy_events() -> None:
    derived = codec.dumpb(_retrained(model_version="r30-k2-fedcba987654", content_hash="f" * 64, at=1.0 + 2e-16))
    legacy = _retrained(fingerprint="f8-bytes")
    current = _retrained()
    report = ReplayReport()
    assert _same(derived, legacy, report) and report.legacy_numerics == 1
    assert not _same(derived, current, report)
    # a real difference is one in a legacy event too: another rank, a float off by more than 1e-9
    assert not _same(codec.dumpb(_retrained(model_version="r30-k3-fedcba987654")), legacy, report)
    assert not _same(codec.dumpb(_retrained(at=1.001)), legacy, report)
    assert report.legacy_numerics == 1

"""The joint evidence read by bank row (`analogs.JointEvidence`) gives every row of the reading
bank what the previous path gave it, bit for bit: `classifier._other`'s dict of the fits'
`evidence` dicts, looked up by the bank's ids (`dict.get`, absent: 0.0) — on random banks with
absent, shared and repeated ids, signed zeros and NO_EVIDENCE-sized weights, and through
`analogs.estimate` (engine 3's and 3.2's parameters, the shifted bank's tiled ids). Its row
alignments are cached by the banks' id tuples: a changed bank (a new row prefix) is read afresh."""

from __future__ import annotations

import math
from itertools import repeat

import numpy as np
from sextant_contracts.model import Classification
from sextant_core.classification import analogs
from sextant_core.classification.classifier import _other, _other_evidence
from sextant_core.classification.engine import ENGINE_VERSIONS

READER = Classification.HETEROGENEITY
OTHERS = (Classification.SCALE_UP, Classification.SCALE_OUT)


def _bank(rng: np.random.Generator, ids: list[str], n: int = 5) -> analogs.AnalogBank:
    y = rng.normal(size=(len(ids), n)) * 2
    mask = rng.random((len(ids), n)) < 0.85
    mask[:, :2] = True  # every row has the observed columns 0 and 1 (usable rows)
    return analogs.bank(np.where(mask, y, 0.0), mask, 1, ids=ids)


def _fit(rng: np.random.Generator, b: analogs.AnalogBank, trial: int) -> analogs.Fit | None:
    cols = np.array([0, 1] if trial % 3 else [0, 1, 2], dtype=np.int64)
    vals = rng.normal(size=len(cols)) * 2
    if trial % 5 == 0:
        vals[0] = -0.0
    return analogs.fit(b, cols, vals, tau=float(rng.choice([0.02, 0.05, 0.3])), beta=0.3 if trial % 2 else None,
                       zeros=np.array([3], dtype=np.int64) if trial % 4 == 0 else None,
                       zero_penalty=5.0 if trial % 4 == 0 else None)


def _previous(fits: dict[Classification, analogs.Fit | None], b: analogs.AnalogBank) -> np.ndarray:
    """The previous path: each fit's `evidence` dict, `_other`'s dict of them, read by `b`'s ids."""
    other = _other({c: f.as_dict() for c, f in fits.items() if f is not None}, READER)
    return np.array(list(map(other.get, b.ids, repeat(0.0))), dtype=np.float64)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def _random_case(rng: np.random.Generator, trial: int) -> tuple[analogs.AnalogBank, dict[Classification, analogs.Fit | None]]:
    pool = [f"w{i}" for i in range(60)]
    reader_ids = list(rng.choice(pool, size=int(rng.integers(1, 40)), replace=False))
    if trial % 6 == 0:
        reader_ids = reader_ids * 2  # a reader's ids may repeat (a shifted bank repeats every id)
    reader = _bank(rng, reader_ids)
    fits: dict[Classification, analogs.Fit | None] = {}
    for c in OTHERS[: int(rng.integers(1, 3))]:
        ids = list(rng.choice(pool, size=int(rng.integers(1, 50)), replace=False))
        fits[c] = _fit(rng, _bank(rng, ids), trial)
    return reader, fits


def test_rows_equal_the_dict_path_bit_for_bit_on_random_banks() -> None:
    rng = np.random.default_rng(19)
    checked = {1: 0, 2: 0}
    for trial in range(400):
        reader, fits = _random_case(rng, trial)
        joint = _other_evidence(fits, READER)
        if not isinstance(joint, analogs.JointEvidence):
            continue
        got = joint.rows(reader)
        assert _same_bits(got, _previous(fits, reader)), trial
        assert _same_bits(joint.rows(reader), got)  # the cached alignment: the same rows again
        checked[len(joint.fits)] += 1
    assert checked[1] > 50 and checked[2] > 50


def test_not_exact_cases_keep_the_dict_path() -> None:
    rng = np.random.default_rng(7)
    dup = _fit(rng, _bank(rng, ["a", "b", "a"]), 1)  # an id twice in one bank: the dict keeps one
    assert dup is not None
    assert not analogs.JointEvidence([dup]).exact()
    assert isinstance(_other_evidence({Classification.SCALE_UP: dup}, READER), dict)
    fine = _fit(rng, _bank(rng, ["a", "b", "c"]), 1)
    assert fine is not None and analogs.JointEvidence([fine]).exact()
    assert not analogs.JointEvidence([fine, fine, fine]).exact()  # three fits: `_other`'s fsum
    assert not analogs.JointEvidence([]).exact()
    for bad in (-math.inf, math.nan, -1e308):  # `_other`'s fsum branch (or its overflow)
        w = fine.weight.copy()
        w[0] = bad
        odd = analogs.Fit(bank=fine.bank, ok=fine.ok, weight=w)
        assert not analogs.JointEvidence([odd]).exact()
        assert not analogs.JointEvidence([fine, odd]).exact()
    # a bad weight on an unusable row is never read (not in the dict either)
    w = fine.weight.copy()
    ok = fine.ok.copy()
    ok[0], w[0] = False, math.nan
    assert analogs.JointEvidence([analogs.Fit(bank=fine.bank, ok=ok, weight=w)]).exact()


def test_a_changed_bank_is_aligned_afresh() -> None:
    """The alignment cache is keyed by the banks' id tuples: the next row prefix's bank (rows added,
    an id moved) gives the uncached result, and the previous bank still gives its own."""
    rng = np.random.default_rng(3)
    reader = _bank(rng, ["a", "b", "c", "d"])
    before = _bank(rng, ["c", "a", "x"])
    f0 = _fit(rng, before, 1)
    assert f0 is not None
    r0 = analogs.JointEvidence([f0]).rows(reader)
    assert _same_bits(r0, _previous({OTHERS[0]: f0}, reader))
    grown = analogs.AnalogBank(y=np.vstack([before.y[[1, 0, 2]], rng.normal(size=(2, 5))]),
                               mask=np.vstack([before.mask[[1, 0, 2]], np.ones((2, 5), dtype=bool)]),
                               ids=("a", "c", "x", "d", "b"))
    f1 = _fit(rng, grown, 1)
    assert f1 is not None
    r1 = analogs.JointEvidence([f1]).rows(reader)
    assert _same_bits(r1, _previous({OTHERS[0]: f1}, reader))
    analogs._ALIGNED.clear()
    analogs._POSITIONS.clear()
    assert _same_bits(analogs.JointEvidence([f1]).rows(reader), r1)  # uncached: the same
    assert _same_bits(analogs.JointEvidence([f0]).rows(reader), r0)
    # an equal tuple of ids that is another object is aligned by its content, not confused
    copy = analogs.AnalogBank(y=reader.y, mask=reader.mask, ids=tuple(list(reader.ids)))
    assert _same_bits(analogs.JointEvidence([f1]).rows(copy), r1)


def test_estimate_with_rows_equals_estimate_with_the_dict() -> None:
    """`analogs.estimate` given the bank-row evidence ≡ given `_other`'s dict, with engine 3's
    joint matrices' parameters and engine 3.2's shifted bank (its ids repeated per step)."""
    rng = np.random.default_rng(11)
    params = [p for v in ("3", "3.2") for _, p in ENGINE_VERSIONS[v].analogs if p.joint]
    assert any(p.shift_grid for p in params)
    checked = 0
    for trial in range(240):
        reader, fits = _random_case(rng, trial)
        joint = _other_evidence(fits, READER)
        if not isinstance(joint, analogs.JointEvidence):
            continue
        as_dict = _other({c: f.as_dict() for c, f in fits.items() if f is not None}, READER)
        n = reader.y.shape[1]
        cols = np.array([0, 1], dtype=np.int64)
        vals = reader.y[0, :2] + rng.normal(size=2) * 0.1
        fm_mean, fm_std = rng.normal(size=n), np.abs(rng.normal(size=n)) + 0.1
        zeros = np.array([4], dtype=np.int64) if trial % 2 else None
        for p in params:
            got = analogs.estimate(reader, cols, vals, fm_mean, fm_std, p, zeros=zeros, other=joint)
            want = analogs.estimate(reader, cols, vals, fm_mean, fm_std, p, zeros=zeros, other=as_dict)
            assert _same_bits(got, want), (trial, p)
        checked += 1
    assert checked > 100

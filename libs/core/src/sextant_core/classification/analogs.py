"""Analog fold-in: a new row's hidden cells from the known rows that look like it, with the point
estimate that minimises the relative error.

The factor model (`foldin`) predicts a hidden cell by the posterior *mean in log space*: the
median of a log-normal, which the benchmark's loss |estimate/truth − 1| punishes where the truth
can be far below it (a service whose QPS within its latency bound collapses on a slow platform;
an analytics job's scale-out knee). Measured on the twin (`bench/classification.py --source twin`,
seeds 1–5, docs/classification/reference.md), the losses came from the shape of the posterior,
not from its centre, so this estimator changes both:

* **Posterior from analogs.** Every known row that has all the new row's observed columns is an
  analog (in practice the dense rows: the offline seeds and any richly profiled workload). In the
  model space (``ln value``) an analog ``r`` is shifted by its level offset
  ``b_r = mean_o(z_o − y_ro)`` and weighted by how well its shape fits the observed entries and,
  optionally, by how close its level is::

      log w_r = −Σ_o (z_o − y_ro − b_r)² / (2 τ²) − b_r² / (2 β²)      (β = None: no level term)

  Its prediction of a hidden cell i is ``y_ri + b_r``. The level term is for matrices whose rows
  share one unit (`EngineParams.analog_level_matrices`): there the level says which kind of
  workload the row is, as the factor model's `FitParams.row_bias_prior` assumes.
* **Mixed with the factor model.** A share ``mix`` of the posterior is the factor model's Gaussian
  predictive ``N(m_i, s_i²)`` (16 quantiles), so a cell no analog covers, or a row unlike every
  analog, keeps the factor model's answer.
* **Relative-error point estimate.** For the loss Σ w |e − t| / t the minimiser is the median of t
  under the weights w/t (`weighted_relative_median`), the estimator of the reference
  (`sextant_sim.refestimator`); a plain median would sit above it whenever the posterior is wide.

Engine 3 adds five rules, each off by default (engine 2's parameters and tags unchanged):

* **Censored entries** (`AnalogParams.zero_penalty`). A performance measurement of 0 (a service
  that serves nothing within its latency bound on that configuration or platform) cannot enter a
  log-space row, so the knowledge base drops it (`Matrix.rejected`); a dense row therefore lacks a
  cell where it measured nothing. The new row's own 0s (`zeros`) are evidence of its shape: an
  analog that *has* a value where the new row served nothing gets ``log w −= zero_penalty``
  per such column, so the analogs that also collapsed there (and lack the cell) lead.
* **Anchored level offset** (`AnalogParams.anchor`). The analog's prediction uses the offset at
  the row's *largest* observed entry instead of the mean over the entries (the weights keep the
  mean's misfit). A multiplicative row gives the same offset either way; a row near a bound — a
  service's QPS within its latency bound is capacity minus a constant, so its smallest
  configuration may serve 1 % of the next one — has a small entry whose log is dominated by the
  bound, and the mean offset dragged every hidden cell down with it (measured: memcached-large
  rows with 113 QPS on 1 core and 42 800 on 4 were predicted 13 500 on 8 cores, truth 75 800).
* **Shrunk level offset** (`AnalogParams.shrink`, with β). The analog's prediction uses the
  posterior mean of the level offset under the level prior, ``b_r · (k/τ²) / (k/τ² + 1/β²)``
  (k observed columns), instead of the raw mean: where rows share one unit the analog's own level
  is evidence of the new row's.
* **Evidence from the workload's other matrices** (`AnalogParams.joint`, `evidence`). Every
  matrix of a workload is a row with the same id (`WorkloadClassified` appends one row per
  matrix; the offline seeds too), so an analog's fit in the other performance matrices with an
  analog fold-in (its scale-up shape, its platforms) says whether it is the same kind of workload:
  ``log w += joint · Σ_other matrices (log w_other − max log w_other)``.
* **Collapse candidates** (`AnalogParams.collapse`). An analog with every observed column that
  *lacks* the hidden cell (in practice: it measured 0 there — served nothing within its bound)
  is evidence that the new row collapses there too; the engine-2 posterior dropped it. Engine 3
  keeps those analogs' weight (times ``exp(−collapse)``) as one candidate ``collapse_depth``
  log units below the row's lowest entry. Under the relative error a candidate near 0 pulls the
  point estimate down to it: the loss of predicting ~0 is at most 100 %, that of predicting
  thousands where the truth is a few units is unbounded (measured on the twin's services: one
  cell of truth 0.8 QPS predicted at 2 700 made 97 % of a seed's heterogeneity error).

Engine 3.2 adds one rule, off by default (engine 3's parameters and tags unchanged):

* **Shifted analogs** (`AnalogParams.shift_grid`, `shift_bank`). Where the new row measured 0, a
  row that is "capacity minus a constant" is near its bound on the next configurations, and a
  tighter bound (a larger constant) lowers them more than a scale does. Each analog that also
  collapsed there enters once per step t as its raw row minus ``t · m`` (m: its smallest value
  at the new row's measured columns). With `AnalogParams.shift` set, the analogs that served
  there are shifted too (minus their value there first) at that log-weight penalty; engine 3.2
  leaves them to `zero_penalty` (docs/classification/engine-3.2.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri

from .normalise import FloatArray

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

_QUANTILES = 16
_Z = ndtri((np.arange(_QUANTILES) + 0.5) / _QUANTILES)  # standard-normal quantiles of the factor model's share
NO_EVIDENCE = -50.0  # log weight of a row the other matrices have no fit for (absent there)


@dataclass(frozen=True, slots=True)
class AnalogParams:
    """τ (shape misfit scale, model units), β (level prior width; None = flat), mix (share of the
    factor model's predictive in the posterior, 0..1)."""

    tau: float = 0.02
    beta: float | None = None
    mix: float = 0.2
    zero_penalty: float | None = None  # engine 3: censored entries of the new row (None: ignored)
    shrink: bool = False  # engine 3: the level offset shrunk under the β prior
    joint: float = 0.0  # engine 3: weight of the workload's other matrices' evidence
    anchor: bool = False  # engine 3: the level offset taken at the row's largest entry
    collapse: float | None = None  # engine 3: log-weight penalty of the collapse candidate (None: none)
    collapse_depth: float = 7.0  # engine 3: the collapse candidate, in log units below the row's lowest entry
    shift_grid: tuple[float, ...] = ()  # engine 3.2: steps t of the shifted analogs' constant (empty: off)
    shift: float | None = None  # engine 3.2: log-weight penalty of a shifted analog that served at a 0 (None: not shifted)

    def tag(self) -> str:
        """Engine 2's tag for engine 2's fields (a changed tag would change no model, but keeps
        the version strings of recorded decisions as they were)."""
        return (f"an:tau={self.tau!r}:beta={self.beta!r}:mix={self.mix!r}"
                + (f":zp={self.zero_penalty!r}" if self.zero_penalty is not None else "")
                + (":shrink" if self.shrink else "")
                + (f":joint={self.joint!r}" if self.joint else "")
                + (":anchor" if self.anchor else "")
                + (f":collapse={self.collapse!r}/{self.collapse_depth!r}" if self.collapse is not None else "")
                + (f":shift={','.join(map(repr, self.shift_grid))}/{self.shift!r}" if self.shift_grid else ""))


@dataclass(frozen=True, slots=True)
class AnalogBank:
    """The known rows usable as analogs (≥ `min_entries` entries), as a dense (rows, columns) block."""

    y: FloatArray
    mask: BoolArray
    ids: tuple[str, ...] = ()  # row ids (the same workload's rows in other matrices share them)


def bank(y: FloatArray, mask: BoolArray, min_entries: int = 3, ids: Sequence[str] | None = None) -> AnalogBank:
    """The rows of (y, mask) with at least `min_entries` observed cells (a row needs its observed
    columns and the hidden one: a 2-entry row is never an analog of a 2-entry row)."""
    keep = mask.sum(axis=1) >= min_entries
    kept = tuple(ids[i] for i in np.flatnonzero(keep).tolist()) if ids is not None else ()
    return AnalogBank(y=np.where(mask[keep], y[keep], 0.0), mask=mask[keep].copy(), ids=kept)


def weighted_relative_median(z: FloatArray, w: FloatArray) -> float:
    """argmin_e Σ w_j |e − t_j| / t_j over t_j = exp(z_j), in model space (ln e): the weighted
    median of z under weights w_j / t_j (computed stably relative to the largest weight)."""
    lw = np.log(np.maximum(w, 1e-300)) - z
    ww = np.exp(lw - lw.max())
    o = np.argsort(z, kind="stable")
    c = np.cumsum(ww[o])
    return float(z[o][int(np.searchsorted(c, 0.5 * c[-1]))])


def _unique(cols: IntArray) -> IntArray:
    """`np.unique(cols)` of a few int64 column indices (the same array), without its sort of a copy."""
    return np.array(sorted(set(cols.tolist())), dtype=np.int64)


def _fit(b: AnalogBank, columns: IntArray, values: FloatArray, tau: float, beta: float | None,
         zeros: IntArray | None, zero_penalty: float | None
         ) -> tuple[BoolArray, FloatArray, FloatArray, IntArray, FloatArray] | None:
    """(usable rows, log weight, level offset per bank row, observed columns, their values) of a
    new row observed at `columns`; None when no bank row has every observed column (or a column
    is unknown)."""
    cols = np.asarray(columns, dtype=np.int64)
    if len(cols) == 0 or b.y.shape[0] == 0:
        return None
    uniq = _unique(cols)
    if not (uniq < b.y.shape[1]).all():  # a column no analog has: no analog has all the observed columns
        return None
    ok: BoolArray = np.asarray(b.mask[:, uniq].all(axis=1), dtype=bool)
    if not ok.any():
        return None
    # a column measured once (the usual case) is its value: the mean of one element, exactly
    # (+ 0.0: numpy's mean of -0.0 is 0.0)
    obs = (np.asarray(values, dtype=np.float64)[np.argsort(cols, kind="stable")] + 0.0 if len(uniq) == len(cols)
           else np.array([float(np.mean(values[cols == c])) for c in uniq]))
    d = obs[None, :] - b.y[:, uniq]
    off = d.mean(axis=1)
    lw = -((d - off[:, None]) ** 2).sum(axis=1) / (2.0 * tau ** 2)
    if beta is not None:
        lw = lw - off ** 2 / (2.0 * beta ** 2)
    if zero_penalty is not None and zeros is not None:
        for j in np.unique(np.asarray(zeros, dtype=np.int64)):
            if j < b.mask.shape[1]:  # an analog that served something where the new row served nothing
                lw = lw - zero_penalty * b.mask[:, j]
    return ok, lw, off, uniq, obs


def evidence(b: AnalogBank, columns: IntArray, values: FloatArray, tau: float, beta: float | None = None,
             zeros: IntArray | None = None, zero_penalty: float | None = None) -> dict[str, float]:
    """Row id -> log weight (0 for the best) of every bank row with the observed columns: how well
    each known workload fits the new row in this matrix (`AnalogParams.joint`)."""
    fit = _fit(b, columns, values, tau, beta, zeros, zero_penalty)
    if fit is None or not b.ids:
        return {}
    ok, lw, _, _, _ = fit
    top = float(lw[ok].max())
    rows = np.flatnonzero(ok)
    return dict(zip([b.ids[i] for i in rows.tolist()], (lw[rows] - top).tolist(), strict=True))


@dataclass(frozen=True, slots=True)
class Fit:
    """One matrix's fit of a new row (`fit`): its bank, the rows with every observed column, and
    each row's log weight relative to the best (`lw - top`; read only where `ok`)."""

    bank: AnalogBank
    ok: BoolArray
    weight: FloatArray

    def as_dict(self) -> dict[str, float]:
        """`evidence`'s dict: row id -> log weight of every usable row (the same values)."""
        rows = np.flatnonzero(self.ok)
        return dict(zip([self.bank.ids[i] for i in rows.tolist()], self.weight[rows].tolist(), strict=True))


def fit(b: AnalogBank, columns: IntArray, values: FloatArray, tau: float, beta: float | None = None,
        zeros: IntArray | None = None, zero_penalty: float | None = None) -> Fit | None:
    """`evidence` by bank row: None where `evidence` is empty (no usable row, or a bank without ids)."""
    got = _fit(b, columns, values, tau, beta, zeros, zero_penalty)
    if got is None or not b.ids:
        return None
    ok, lw, _, _, _ = got
    top = float(lw[ok].max())
    return Fit(bank=b, ok=ok, weight=lw - top)  # element-wise: `evidence`'s `lw[rows] - top` at its rows


# a bank's ids -> (that tuple, row of each id, or None when an id repeats); and (reader's ids,
# other's ids) -> (both tuples, the other's row of each of the reader's ids, -1 = absent). Keyed by
# the tuples' identity and kept in the entry (so an id is never reused while it is cached): banks
# are memoised per row prefix (`engine.analog_bank`), and a new prefix is a new bank, a new tuple
_POSITIONS: dict[int, tuple[tuple[str, ...], dict[str, int] | None]] = {}
_ALIGNED: dict[tuple[int, int], tuple[tuple[str, ...], tuple[str, ...], IntArray]] = {}
_ALIGN_SIZE = 256


def _positions(ids: tuple[str, ...]) -> dict[str, int] | None:
    hit = _POSITIONS.get(id(ids))
    if hit is None or hit[0] is not ids:
        pos = {i: r for r, i in enumerate(ids)}
        if len(_POSITIONS) >= _ALIGN_SIZE:
            _POSITIONS.clear()
        hit = _POSITIONS[id(ids)] = (ids, pos if len(pos) == len(ids) else None)
    return hit[1]


def _aligned(reader: tuple[str, ...], other: tuple[str, ...]) -> IntArray:
    """The row of `other` holding each id of `reader` (-1: absent); `other`'s ids are unique."""
    key = (id(reader), id(other))
    hit = _ALIGNED.get(key)
    if hit is None or hit[0] is not reader or hit[1] is not other:
        pos = _positions(other)
        assert pos is not None
        rows = np.fromiter(map(pos.get, reader, repeat(-1)), dtype=np.int64, count=len(reader))
        rows.setflags(write=False)
        if len(_ALIGNED) >= _ALIGN_SIZE:
            _ALIGNED.clear()
        hit = _ALIGNED[key] = (reader, other, rows)
    return hit[2]


class JointEvidence:
    """The fits of a workload's other matrices (`AnalogParams.joint`), read by the rows of the
    reading matrix's bank: what `classifier._other`'s dict gives each of that bank's ids (absent:
    0.0), without building the dict. Exact (`exact`) for one or two fits whose banks' ids are
    unique and whose usable weights are finite and above -1e307 (so no sum of two overflows and
    `_other` takes its IEEE branch): one fit's weight + 0.0, or the two weights (NO_EVIDENCE where a
    fit lacks the row) summed + 0.0, the same operations on the same values, element-wise."""

    __slots__ = ("fits",)

    def __init__(self, fits: Sequence[Fit]) -> None:
        self.fits = tuple(fits)

    def __bool__(self) -> bool:
        return bool(self.fits)  # a fit has a usable row by construction: `_other`'s dict is not empty

    def exact(self) -> bool:
        if not 1 <= len(self.fits) <= 2:
            return False
        for f in self.fits:
            w = f.weight[f.ok]
            if _positions(f.bank.ids) is None or not (np.isfinite(w).all() and (w > -1e307).all()):
                return False
        return True

    def rows(self, b: AnalogBank) -> FloatArray:
        """Per row of `b`: the summed evidence of its id (0.0 where no fit has it)."""
        parts = []
        for f in self.fits:
            at = _aligned(b.ids, f.bank.ids)
            has = at >= 0
            safe = np.where(has, at, 0)
            has &= f.ok[safe]
            parts.append((has, f.weight[safe]))
        if len(parts) == 1:
            (has, w), = parts
            return np.where(has, w + 0.0, 0.0)
        (ha, wa), (hb, wb) = parts
        total = np.where(ha, wa, NO_EVIDENCE) + np.where(hb, wb, NO_EVIDENCE) + 0.0
        return np.where(ha | hb, total, 0.0)


def estimate(b: AnalogBank, columns: IntArray, values: FloatArray, fm_mean: FloatArray, fm_std: FloatArray,
             params: AnalogParams, zeros: IntArray | None = None,
             other: dict[str, float] | JointEvidence | None = None) -> FloatArray:
    """Model-space estimate of every column of a new row observed at `columns` (`values`), given
    the factor model's predictive mean and std per column. Observed columns are returned as the
    factor model has them (the caller keeps the measured values). `zeros`: columns where the new
    row measured 0 (used with `zero_penalty`; estimated like any hidden cell); `other`: row id ->
    summed log weight of the workload's other matrices (used with `joint`; absent rows: 0), or the
    same by bank row (`JointEvidence`)."""
    n = len(fm_mean)
    fm_mean, fm_std = np.asarray(fm_mean, dtype=np.float64), np.asarray(fm_std, dtype=np.float64)
    out = np.array(fm_mean, dtype=np.float64, copy=True)
    shifted = None
    joint: dict[str, float] | FloatArray | None = other if not isinstance(other, JointEvidence) else (
        other.rows(b) if other and params.joint and b.ids else None)
    if params.shift_grid and zeros is not None and len(zeros):
        base = b
        b, shifted = shift_bank(b, zeros, columns, params.shift_grid, served=params.shift is not None)
        if b is not base and isinstance(joint, np.ndarray):  # the shifted bank: its ids once per step
            joint = np.tile(joint, len(params.shift_grid))
    got = _analogs(b, columns, values, params, zeros, joint, shifted)
    if got is None:
        return out if len(columns) == 0 or b.y.shape[0] == 0 else _fm_only(out, fm_mean, fm_std)
    ya, ma, lw, off, uniq, obs = got
    width = b.y.shape[1]
    seen = set(uniq.tolist())
    # per hidden cell below, the same element-wise operations on the same values as one cell at a
    # time: each analog's prediction y_ri + b_r and the factor model's quantiles, for every column
    # at once; the reductions (max, sum, the median's cumsum) stay per cell
    yo = ya + off[:, None]
    finite = np.isfinite(fm_std).tolist()
    with np.errstate(all="ignore"):  # a non-finite std's quantiles are not used
        fzs = fm_mean[:, None] + fm_std[:, None] * _Z
    share = np.full(len(_Z), params.mix / len(_Z))
    lowest = float(obs.min())
    for i in range(n):
        if i in seen:
            continue
        fz = fzs[i] if finite[i] else np.full(1, fm_mean[i])
        has = ma[:, i] if i < width else np.zeros(len(lw), dtype=bool)
        if params.collapse is not None and i < width:
            out[i] = _with_collapse(yo[has, i], lw, has, lowest, fz, params)
            continue
        if not has.any():
            out[i] = weighted_relative_median(fz, np.full(len(fz), 1.0 / len(fz)))
            continue
        lh = lw[has]
        w = np.exp(lh - lh.max())
        w = w / w.sum()
        z = np.concatenate([yo[has, i], fz])
        ww = np.concatenate([(1.0 - params.mix) * w, share if finite[i] else np.full(1, params.mix)])
        out[i] = weighted_relative_median(z, ww)
    return out


def _analogs(b: AnalogBank, columns: IntArray, values: FloatArray, params: AnalogParams, zeros: IntArray | None,
             other: dict[str, float] | FloatArray | None, shifted: FloatArray | None = None
             ) -> tuple[FloatArray, BoolArray, FloatArray, FloatArray, IntArray, FloatArray] | None:
    """(values, mask, log weight, level offset) of the usable analog rows, the observed columns and
    their values — `estimate`'s posterior before its hidden cells; None without an analog. `shifted`:
    per row, 1.0 for a row `shift_bank` shifted though it served (engine 3.2), weighed by `params.shift`."""
    fit = _fit(b, columns, values, params.tau, params.beta, zeros, params.zero_penalty)
    if fit is None:
        return None
    ok, lw, off, uniq, obs = fit
    if shifted is not None:
        lw = lw - float(params.shift or 0.0) * shifted
    if params.anchor:  # the offset at the largest entry (weights keep the mean offset's misfit)
        j = int(np.argmax(obs))
        off = obs[j] - b.y[:, uniq[j]]
    if params.shrink and params.beta is not None:
        k = len(uniq) / params.tau ** 2
        off = off * (k / (k + 1.0 / params.beta ** 2))
    if isinstance(other, np.ndarray):  # `JointEvidence.rows` of this bank (set only where it is read)
        lw = lw + params.joint * other
    elif params.joint and other and b.ids:
        # `dict.get` mapped in C over the bank's ids (one per analog row): the same values as a
        # comprehension, without a Python frame per row
        lw = lw + params.joint * np.array(list(map(other.get, b.ids, repeat(0.0))))
    return b.y[ok], b.mask[ok], lw[ok], off[ok], uniq, obs


def shift_bank(b: AnalogBank, zeros: IntArray, columns: IntArray, grid: tuple[float, ...], *,
               served: bool = True) -> tuple[AnalogBank, FloatArray]:
    """The bank as seen by a new row that measured 0 at `zeros` and something at `columns` (engine
    3.2, `AnalogParams.shift_grid`): every analog once per step t of `grid`, minus a constant, and
    whether it was shifted though it served something at `zeros` (1.0) or not (0.0). `served`
    False: an analog that served at `zeros` is left as it is at every step.

    A performance that is "capacity minus a constant" (a service's QPS within its latency bound)
    collapses to 0 where the capacity falls below the constant, and a tighter bound raises the
    constant. A new row that served nothing at a column is read as an analog under a larger
    constant: in raw units the analog's row minus ``K_t = v0 + t (m − v0)``, with v0 its largest
    value at `zeros` (0 where it has none: it collapsed there too) and m its smallest value at the
    new row's measured `columns`, so that it collapses at `zeros` and still serves at `columns`
    (t < 1); its cells at or below K_t become missing. t = 0 is the least constant that explains
    the 0. The transform is per row, in the row's own units (scale-free): nothing of the world."""
    width = b.y.shape[1]
    zc = np.unique(np.asarray(zeros, dtype=np.int64))
    zc = zc[zc < width]
    oc = np.unique(np.asarray(columns, dtype=np.int64))
    oc = oc[oc < width]
    n = b.y.shape[0]
    if len(zc) == 0 or n == 0 or not grid:
        return b, np.zeros(n)
    has = b.mask[:, zc]
    v0 = np.where(has, np.exp(np.where(has, b.y[:, zc], 0.0)), 0.0).max(axis=1)
    fixed = (v0 > 0) & (not served)  # an analog that served at a 0, left as it is (`zero_penalty` weighs it)
    raw = np.where(b.mask, np.exp(np.where(b.mask, b.y, 0.0)), 0.0)
    if len(oc):
        seen = b.mask[:, oc]
        m = np.where(seen, raw[:, oc], np.inf).min(axis=1)
    else:
        m = np.full(n, np.inf)
    m = np.where(np.isfinite(m), m, v0)
    ys, masks = [], []
    for t in grid:
        k = np.where(fixed, 0.0, v0 + t * np.maximum(m - v0, 0.0))
        r = raw - k[:, None]
        keep = b.mask & (r > 0)
        same = (k == 0)[:, None]  # unshifted rows keep their values bit for bit
        ys.append(np.where(same, b.y, np.where(keep, np.log(np.where(keep, r, 1.0)), 0.0)))
        masks.append(np.where(same, b.mask, keep))
    ids = tuple(i for _ in grid for i in b.ids)
    return (AnalogBank(y=np.concatenate(ys), mask=np.concatenate(masks), ids=ids),
            np.tile(((v0 > 0) & ~fixed).astype(np.float64), len(grid)))


def _with_collapse(z: FloatArray, lw: FloatArray, has: BoolArray, lowest: float, fz: FloatArray,
                   params: AnalogParams) -> float:
    """The relative-error point of a hidden cell whose posterior also holds the analogs that lack
    it: together they are one candidate ``collapse_depth`` below the row's lowest entry, with
    their weight times ``exp(−collapse)`` (`AnalogParams.collapse`)."""
    w_all = np.exp(lw - lw.max())
    w = w_all[has]
    lack = float(w_all[~has].sum()) * float(np.exp(-(params.collapse or 0.0)))
    if lack > 0:
        z = np.concatenate([z, [lowest - params.collapse_depth]])
        w = np.concatenate([w, [lack]])
    if w.sum() <= 0:
        return weighted_relative_median(fz, np.full(len(fz), 1.0 / len(fz)))
    w = w / w.sum()
    return weighted_relative_median(np.concatenate([z, fz]),
                                    np.concatenate([(1.0 - params.mix) * w, np.full(len(fz), params.mix / len(fz))]))


def _fm_only(out: FloatArray, fm_mean: FloatArray, fm_std: FloatArray) -> FloatArray:
    """No analog: the relative-error point of the factor model's own Gaussian predictive."""
    for i in range(len(out)):
        if np.isfinite(fm_std[i]):
            fz = fm_mean[i] + fm_std[i] * _Z
            out[i] = weighted_relative_median(fz, np.full(len(fz), 1.0 / len(fz)))
    return out

"""Choosing the rank (and, for external matrices, the regularisation) from the data.

**[IMPL CHOICE] pseudo-new-row cross-validation.** What matters is how well a row with only a few
known cells is completed, so that is what we score. Probe rows are the rows with at least
``keep + 1`` observed cells. Each probe row is assigned to one of `folds` folds and, once, keeps
``keep`` of its cells (``keep`` = the typical number of known cells of the sparse rows, at least 1;
rows with few cells keep all but one) and hides the rest. For each fold, each candidate (rank, reg)
is trained on the matrix with that fold's hidden cells removed, the probe rows are completed from
their kept cells by the Bayesian fold-in, and the squared error on the hidden cells (normalised
space) is summed. The search is coordinate-wise (all ranks at the middle reg of the grid, all
regs at the best of those ranks, all ranks again at the best reg), ~2R + G trainings per fold
instead of R × G. With `patience` (the knowledge base's retrains use `PATIENCE` = 2) a rank scan
stops once that many successive ranks bring no new best (more than `SLACK` better): measured, the
CV curve of 2-entry rows is flat past rank 1–2 on large matrices, while on small external matrices
it can dip again at higher ranks, so ``classify-matrix`` scans them all. The winner is the smallest rank whose error is within one *paired* standard error of the best
candidate's (the "one-standard-error rule", on per-cell differences; at least `SLACK` = 1 %) —
fewer concepts generalise better to the rows nobody has seen yet, and CV curves of small matrices
are noisy (measured: without the rule, ranks 6–7 were picked on rank-3 data and filled worse).

Folds and kept cells are drawn from hashes of the row keys (`sextant_contracts.ids.seed_from`),
never from row positions, so the choice does not depend on the order of the rows. When there are
fewer than `MIN_PROBES` probe rows the rank falls back to the number of singular values of the
bias-removed residual needed for 90 % of its energy (Paragon §9.1 proposal), and reg to the
default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from sextant_contracts.ids import seed_from

from .factorize import BoolArray, Prepared, fit_biases, prepare, train
from .foldin import fold_in_many
from .normalise import FloatArray
from .params import MAX_AUTO_RANK, FitParams

SLACK = 0.01
MIN_PROBES = 6
PATIENCE = 2
DEFAULT_FOLDS = 3
REG_GRID: tuple[float, ...] = (0.001, 0.01, 0.03, 0.1, 0.3)


@dataclass(frozen=True, slots=True)
class Selection:
    """The chosen rank and reg, and the CV table ((rank, reg) -> mean squared error)."""

    rank: int
    reg: float
    cv_error: float
    table: tuple[tuple[int, float, float], ...]
    method: str  # "cv" | "energy"


def _probe_plan(mask: BoolArray, row_keys: Sequence[str], keep: int, folds: int
                ) -> tuple[np.ndarray, BoolArray]:
    """(fold of each row, -1 = not a probe; hidden cells (m, n))."""
    m_rows, _ = mask.shape
    n_obs = mask.sum(axis=1)
    fold = np.full(m_rows, -1)
    hidden = np.zeros_like(mask)
    for u in range(m_rows):
        if n_obs[u] < 2 or n_obs[u] < min(keep + 1, 3):
            continue
        rng = np.random.default_rng(seed_from("cv-probe", row_keys[u]))
        fold[u] = int(rng.integers(folds))
        cols = np.flatnonzero(mask[u])
        k_keep = keep if n_obs[u] > keep else n_obs[u] - 1
        perm = rng.permutation(len(cols))
        hidden[u, cols[perm[k_keep:]]] = True
    return fold, hidden


def energy_rank(y: FloatArray, mask: BoolArray, energy: float = 0.9, max_rank: int = MAX_AUTO_RANK) -> int:
    """Smallest k whose singular values hold `energy` of the bias-removed residual's energy."""
    mu, b, c = fit_biases(y, mask)
    resid = np.where(mask, y - mu - b[:, None] - c[None, :], 0.0)
    s2 = np.clip(np.linalg.eigvalsh(resid.T @ resid)[::-1], 0.0, None)
    total = s2.sum()
    if total <= 1e-18:
        return 0
    k = int(np.searchsorted(np.cumsum(s2) / total, energy) + 1)
    return max(0, min(k, max_rank, y.shape[1] - 1))


def select_rank(y: FloatArray, mask: BoolArray, row_keys: Sequence[str], params: FitParams, *,
                keep: int = 2, ranks: Sequence[int] | None = None, regs: Sequence[float] | None = None,
                folds: int = DEFAULT_FOLDS, patience: int | None = None, se_factor: float = 1.0) -> Selection:
    """Cross-validate (rank, reg) on `y` (normalised, observed where `mask`).

    `regs` None = only ``params.reg``; `ranks` None = 0 .. min(MAX_AUTO_RANK, n - 1); `patience`
    None = scan every rank, else stop a scan after that many ranks without a new best.
    """
    m_rows, n = y.shape
    if len(row_keys) != m_rows:
        raise ValueError("one key per row")
    ranks = list(range(0, min(MAX_AUTO_RANK, n - 1) + 1)) if ranks is None else list(ranks)
    regs = [params.reg] if regs is None else list(regs)
    fold, hidden = _probe_plan(mask, row_keys, max(1, keep), folds)
    if int((fold >= 0).sum()) < MIN_PROBES:
        k = min(energy_rank(y, mask), max(ranks))
        return Selection(rank=k, reg=params.reg, cv_error=float("nan"), table=(), method="energy")
    plans = []
    count = 0
    for f in range(folds):
        rows_f = fold == f
        if not rows_f.any():
            continue
        hid = hidden & rows_f[:, None]
        train_mask = mask & ~hid
        if not np.all(train_mask.any(axis=0)):
            train_mask = train_mask | (mask & ~train_mask.any(axis=0)[None, :])  # keep every column alive
            hid = hid & ~train_mask
        count += int(hid.sum())
        plans.append((train_mask, y[rows_f], (mask & ~hid)[rows_f], hid[rows_f]))
    table: dict[tuple[int, float], float] = {}
    cells: dict[tuple[int, float], np.ndarray] = {}  # squared error per hidden cell, fixed order

    # each fold's rank-independent start of `train` (the bias baseline, the first SVD's Gram
    # eigendecomposition), computed once for every candidate trained on it
    prepared: dict[int, Prepared] = {}

    def cv(k: int, reg: float) -> float:
        if (k, reg) not in table:
            parts = []
            for j, (train_mask, probe_y, kept, hid) in enumerate(plans):
                fit_params = replace(params, rank=k, reg=reg)
                if j not in prepared:
                    prepared[j] = prepare(y, train_mask, fit_params)
                fit = train(y, train_mask, fit_params, prepared=prepared[j])
                mean, _ = fold_in_many(fit.model, probe_y, kept)
                parts.append(((mean - probe_y)[hid]) ** 2)
            cells[(k, reg)] = np.concatenate(parts)
            table[(k, reg)] = float(cells[(k, reg)].sum()) / max(count, 1)
        return table[(k, reg)]

    def pick() -> tuple[int, float]:
        """Smallest rank whose best error is within one paired standard error (or SLACK) of the
        best evaluated candidate, with its best reg."""
        best_key = min(table, key=lambda key: (table[key], key))
        for k in ranks:
            row = sorted((e, r) for (kk, r), e in table.items() if kk == k)
            if not row:
                continue
            e, r = row[0]
            diff = cells[(k, r)] - cells[best_key]
            se = float(np.std(diff) / np.sqrt(max(len(diff), 1)))
            if e - table[best_key] <= max(se_factor * se, SLACK * table[best_key]) + 1e-300:
                return k, r
        raise AssertionError("unreachable")  # pragma: no cover

    def scan(reg: float) -> None:
        """Ranks in ascending order; stop after PATIENCE ranks without a new best."""
        best, since = float("inf"), 0
        for k in ranks:
            e = cv(k, reg)
            if e < best * (1.0 - SLACK):
                best, since = e, 0
            else:
                since += 1
                if patience is not None and since >= patience:
                    return

    # coordinate search: ranks at the middle reg, regs at that rank, ranks again at that reg
    reg0 = regs[len(regs) // 2]
    scan(reg0)
    if len(regs) > 1:
        k1, _ = pick()
        for reg in regs:
            cv(k1, reg)
        _, reg1 = pick()
        scan(reg1)
    k, reg = pick()
    rows = tuple((kk, r, e) for (kk, r), e in sorted(table.items()))
    return Selection(rank=k, reg=reg, cv_error=table[(k, reg)], table=rows, method="cv")

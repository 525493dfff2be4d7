"""Statistics of an observable matrix at a measured shape — the arithmetic of
`shared/tools/realism_check.py`, kept identical so the twin's report and the check agree.

A statistic is computed on log values after removing row and column means (the interaction part):
rank-k share = variance captured by the top k singular values; `corr` = mean absolute correlation
between columns; `rms` = root mean square of the interaction. Rank shares depend on the shape, so
they are averaged over `draws` random sub-matrices of the measured shape (rows and columns drawn
without replacement, `numpy.random.default_rng(rng_seed)`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# measured shape and bands (min, max) for: rank-1 share, rank-3 share, |corr|, interaction rms
BANDS: dict[str, tuple[tuple[int, int], dict[str, tuple[float, float]]]] = {
    "colocation": ((71, 22), {"r1": (0.45, 0.69), "r3": (0.75, 0.91), "corr": (0.30, 0.55), "rms": (0.15, 0.29)}),
    "heterogeneity": ((18, 12), {"r1": (0.45, 0.82), "r3": (0.80, 0.97), "corr": (0.35, 0.60), "rms": (0.10, 0.30)}),
    "scaleout": ((56, 4), {"r1": (0.55, 0.85), "r3": (0.97, 1.0), "corr": (0.20, 0.50), "rms": (0.13, 0.30)}),
}


@dataclass(frozen=True)
class Matrix:
    """An observable matrix: `values[i, j]` > 0 for row `row_ids[i]`, column `col_ids[j]`."""

    row_ids: tuple[str, ...]
    col_ids: tuple[str, ...]
    values: np.ndarray

    def __post_init__(self) -> None:
        if self.values.shape != (len(self.row_ids), len(self.col_ids)):
            raise ValueError(f"values {self.values.shape} do not match {len(self.row_ids)} rows × {len(self.col_ids)} columns")
        if not np.all(np.isfinite(self.values)) or np.any(self.values <= 0):
            raise ValueError("an observable matrix holds finite positive values only")


def _stats(x: np.ndarray) -> dict[str, float]:
    d = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    e = np.linalg.svd(d, compute_uv=False) ** 2
    keep = d.std(0) > 1e-12
    if keep.sum() > 1:
        c = np.corrcoef(d[:, keep], rowvar=False)
        corr = float(np.abs(c[np.triu_indices_from(c, 1)]).mean())
    else:
        corr = 0.0
    total = float(e.sum())
    if total <= 0.0:
        return {"r1": 1.0, "r3": 1.0, "corr": corr, "rms": 0.0}
    return {"r1": float(e[0] / total), "r3": float(e[:3].sum() / total), "corr": corr,
            "rms": float(np.sqrt((d ** 2).mean()))}


def band_stats(values: np.ndarray, shape: tuple[int, int], *, draws: int = 30,
               rng_seed: int = 2026) -> dict[str, float]:
    """Mean statistics of `draws` random `shape` sub-matrices of log(`values`)."""
    x = np.log(np.asarray(values, dtype=float))
    nr, nc = shape
    if x.shape[0] < nr or x.shape[1] < nc:
        raise ValueError(f"matrix {x.shape} is smaller than the measured shape {shape}")
    rng = np.random.default_rng(rng_seed)
    got = []
    for _ in range(draws):
        r = rng.choice(x.shape[0], nr, replace=False)
        c = rng.choice(x.shape[1], nc, replace=False)
        got.append(_stats(x[np.ix_(r, c)]))
    return {k: float(np.mean([g[k] for g in got])) for k in got[0]}


def within_band(name: str, s: dict[str, float]) -> bool:
    """True when every statistic of matrix `name` lies in its measured band."""
    band = BANDS[name][1]
    return all(lo <= s[k] <= hi for k, (lo, hi) in band.items())


def write_csv(path: Path, m: Matrix) -> None:
    """A header row (`id`, then the column ids), then one row per matrix row: its id, its values."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", *m.col_ids])
        for rid, row in zip(m.row_ids, m.values, strict=True):
            w.writerow([rid, *(f"{v:.6g}" for v in row)])

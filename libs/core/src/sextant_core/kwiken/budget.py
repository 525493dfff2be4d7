"""Composing per-stage utility-loss rates into a DAG's loss (jalaparti.md §5.4, "Composition").

- `sequential`: the answer is useful only if every stage completes, so the DAG's loss is
  `r_1 + (1−r_1) r_2 + … ≤ Σ r_s`; SumVar then works with unit costs and `Σ r_s ≤ B`
  (`loss_costs("sequential", …)`). The bound holds for any topology (a union bound), so it is
  what Kwiken uses for a DAG whose stages' contributions are not declared.
- `independent`: stage `s` contributes a share `u_s` of the answer; the loss is
  `Σ_s r_s u_s / Σ u`, i.e. costs `c_s = u_s / Σ u`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .dag import KwikenInputError

KINDS = ("sequential", "independent")


def sequential_loss(r: Sequence[float] | np.ndarray) -> float:
    """The exact loss of stages in sequence: `1 − Π (1 − r_s)`."""
    a = np.asarray(r, dtype=float)
    return float(1.0 - np.prod(1.0 - a))


def independent_loss(r: Sequence[float] | np.ndarray, contributions: Sequence[float] | np.ndarray) -> float:
    """The loss of independent stages: `Σ r_s u_s / Σ u`."""
    u = np.asarray(contributions, dtype=float)
    return float(np.asarray(r, dtype=float) @ u / u.sum())


def loss_costs(kind: str, contributions: Sequence[float] | np.ndarray) -> np.ndarray:
    """The SumVar costs of a loss budget: ones (`sequential`) or `u / Σ u` (`independent`)."""
    u = np.asarray(contributions, dtype=float)
    if u.ndim != 1 or u.size == 0 or np.any(u <= 0) or not np.all(np.isfinite(u)):
        raise KwikenInputError("contributions", "one positive finite contribution per stage is required")
    if kind == "sequential":
        return np.ones_like(u)
    if kind == "independent":
        return u / u.sum()
    raise KwikenInputError("composition", f"unknown composition {kind!r}; known: {', '.join(KINDS)}")

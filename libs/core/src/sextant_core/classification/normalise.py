"""Entry normalisation: raw measurements <-> the space the factor model works in.

Paragon §9.2 leaves "normalised performance" undefined and lists three options: (a) a fixed
reference platform, (b) log-IPS with per-row mean centring (a bias model), (c) global per-column
constants. Quasar §9.2 asks for comparable units across rows. **[IMPL CHOICE] Sextant uses (b):**

* **Performance** (scale-up, scale-out, heterogeneity; QPS, IPS, 1/completion-time — any positive
  unit) is stored as ``ln(value)``. A workload's unit and its absolute level become its row bias
  ``b_u``, which the fold-in estimates with a *flat* prior, so multiplying every measurement of a
  workload by a constant multiplies its whole predicted row by the same constant (exactly, up to
  floating point): rows of different units (QPS of a service, IPS of a batch job) share one matrix.
  An absolute error ``e`` in log space is a relative error ``exp(e) - 1`` in raw space, which is the
  error the papers report (Quasar Table 2).
* **Interference scores** (tolerated and caused, 0..100, Paragon §2.3) are already on a common
  scale; they are stored as ``value / 100`` (linear) and predictions are clipped back to 0..100.
  Their errors are reported in absolute points, as Paragon Table III does.

``LINEAR`` (no transform) exists for external matrices (``classify-matrix --normalise linear``),
where the data need not be multiplicative.
"""

from __future__ import annotations

import math
from enum import StrEnum

import numpy as np
from numpy._core import umath as _umath
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
# the ufunc `np.clip` calls for float bounds (through `ndarray.clip` and `_methods._clip`), called
# directly: the same values, without the wrappers (most of its cost on the one-value arrays here)
_clip: np.ufunc = _umath.clip  # type: ignore[attr-defined]  # (not in numpy's stubs)


class Normalisation(StrEnum):
    LOG = "log"  # performance: ln(value); values must be > 0
    SCORE = "score"  # interference scores 0..100 -> 0..1, predictions clipped to [0, 100]
    LINEAR = "linear"  # identity; predictions unclipped


class InvalidEntry(ValueError):
    """A value the normalisation cannot represent (e.g. a non-positive performance)."""


def forward(kind: Normalisation, values: FloatArray) -> FloatArray:
    """Raw measurements -> model space. Raises `InvalidEntry` for values out of the domain."""
    v = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        raise InvalidEntry("values must be finite")
    if kind is Normalisation.LOG:
        if np.any(v <= 0):
            raise InvalidEntry("performance values must be > 0 (they are log-normalised)")
        return np.log(v)
    if kind is Normalisation.SCORE:
        if np.any(v < 0) or np.any(v > 100):
            raise InvalidEntry("interference scores must lie in 0..100")
        return v / 100.0
    return v.copy()


def backward(kind: Normalisation, z: FloatArray) -> FloatArray:
    """Model space -> raw units (clipped to the valid range)."""
    z = np.asarray(z, dtype=np.float64)
    if kind is Normalisation.LOG:
        return np.exp(_clip(z, -700.0, 700.0))
    if kind is Normalisation.SCORE:
        return _clip(z * 100.0, 0.0, 100.0)
    return z.copy()


def normalise_one(kind: Normalisation, value: float) -> float | None:
    """One raw value -> model space, or None when out of the domain (no exception: used by folds)."""
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if kind is Normalisation.LOG:
        return math.log(value) if value > 0 else None
    if kind is Normalisation.SCORE:
        return value / 100.0 if 0.0 <= value <= 100.0 else None
    return float(value)


def tolerance(kind: Normalisation) -> float:
    """The model-space half-width used by confidences: ±10 % (performance) or ±10 points
    (scores); for LINEAR, 0.1 in the data's own units."""
    if kind is Normalisation.LOG:
        return float(np.log1p(0.10))
    return 0.10

"""Weighted water-filling of an integer amount of servers, the arithmetic under every policy.

`waterfill(amount, caps, weights)` finds the level `L` with `Σ min(caps_i, weights_i · L) = amount`
(or gives every cap when they do not add up to `amount`) and rounds the result to integers by
largest remainder, ties broken by the lower index. Contract: the result is integral, `0 ≤ x ≤ caps`,
`Σ x = min(amount, Σ caps over positive weights)`, and rows with weight 0 get 0. Vectorised: one sort.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def waterfill(amount: int, caps: IntArray, weights: FloatArray) -> IntArray:
    """Integer weighted max-min split of `amount` servers; see the module docstring."""
    caps = np.asarray(caps, dtype=np.int64)
    out = np.zeros(caps.shape, dtype=np.int64)
    if amount <= 0:
        return out
    w = np.asarray(weights, dtype=np.float64)
    live = (w > 0) & (caps > 0)
    total = int(caps[live].sum())
    if total == 0:
        return out
    if total <= amount:
        out[live] = caps[live]
        return out
    idx = np.flatnonzero(live)
    c = caps[idx].astype(np.float64)
    wl = w[idx]
    ratio = c / wl  # the level at which a row saturates
    order = np.argsort(ratio, kind="stable")
    r = ratio[order]
    cs = np.concatenate(([0.0], np.cumsum(c[order])))  # caps of the rows saturated before k
    ws = np.concatenate((np.cumsum(wl[order][::-1])[::-1], [0.0]))  # weights of rows k..end
    filled = cs[:-1] + r * ws[:-1]  # servers handed out at level r_k
    k = int(np.searchsorted(filled, amount, side="left"))
    level = (amount - cs[k]) / ws[k]
    share = np.minimum(c, wl * level)
    base = np.floor(share + 1e-9).astype(np.int64)
    base = np.minimum(base, caps[idx])
    left = amount - int(base.sum())
    if left > 0:
        frac = share - base
        room = base < caps[idx]
        cand = np.flatnonzero(room)
        # largest remainder first, lower index on ties (lexsort: last key is primary)
        pick = cand[np.lexsort((cand, -frac[cand]))][:left]
        base[pick] += 1
    out[idx] = base
    return out

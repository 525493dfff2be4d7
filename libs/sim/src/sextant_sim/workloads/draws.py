"""Random draws from the ground-truth file's range notation (uniform, log-uniform, weighted choice).

Every helper draws a fixed number of variates whatever the outcome, so a workload's stream stays
aligned across parameter changes that do not touch the draw itself.
"""

from __future__ import annotations

import math

import numpy as np

from ..groundtruth import Draw, LogRange, Range


def draw(spec: Draw, rng: np.random.Generator) -> float:
    u = float(rng.random())
    if isinstance(spec, LogRange):
        lo, hi = spec.log
        return math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
    lo, hi = spec
    return lo + u * (hi - lo)


def uniform(spec: Range, rng: np.random.Generator) -> float:
    u = float(rng.random())
    return spec[0] + u * (spec[1] - spec[0])


def choice(weights: dict[int, float], rng: np.random.Generator) -> int:
    """A key of `weights` drawn with those weights (keys in sorted order)."""
    keys = sorted(weights)
    total = sum(weights[k] for k in keys)
    u = float(rng.random()) * total
    acc = 0.0
    for k in keys:
        acc += weights[k]
        if u < acc:
            return k
    return keys[-1]

"""`random` score: uniform scores in [0, 100) from the decision's seeded stream.

The stream is `Generator(PCG64(SeedSequence(request.seed)))`, the same stream as
`DecisionContext.rng()`; request.seed is the decision's seed, derived from the workload id
(common random numbers, DESIGN §5): the same workload sees the same draws in every profile.
Row i gets the i-th draw, so the scores of a fixed cluster do not depend on the filters.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..framework import PluginArgs
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import CandidateTable, FloatArray


def uniform_scores(seed: int, n: int) -> FloatArray:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    out: FloatArray = 100.0 * rng.random(n)
    return out


@register_plugin
class RandomScore:
    NAME: ClassVar[str] = "random"
    Args: ClassVar[type[PluginArgs]] = PluginArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FloatArray:
        return uniform_scores(request.seed, len(table))

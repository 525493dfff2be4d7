"""`platform` score: the newcomer's predicted performance on each server's platform (its
reconstructed heterogeneity row, Paragon §3.2 step 5 / Quasar §4.1 "high performing platforms
first"), relative to its best predicted platform among those in the table:

    score = 100 · max(perf[platform(s)], 0) / max_p perf[p]

[IMPL CHOICE] A platform without a prediction gets the mean of the predicted ones (`unknown =
"mean"`) or 0 (`unknown = "zero"`); with no prediction at all (or a best prediction ≤ 0) every
server scores 0, so the platform carries no preference and other scorers decide.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np

from ..framework import PluginArgs
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import CandidateTable, FloatArray, IntArray


def platform_scores(perf_by_code: FloatArray, platform_code: IntArray,
                    unknown: Literal["mean", "zero"] = "mean") -> FloatArray:
    """Scores per row from the predicted performance per platform code (NaN = not predicted)."""
    known = np.isfinite(perf_by_code)
    if not known.any():
        return np.zeros(len(platform_code))
    best = float(perf_by_code[known].max())
    if best <= 0:
        return np.zeros(len(platform_code))
    fill = float(perf_by_code[known].mean()) if unknown == "mean" else 0.0
    per_platform = 100.0 * np.clip(np.where(known, perf_by_code, fill), 0.0, None) / best
    out: FloatArray = per_platform[platform_code]
    return out


class PlatformArgs(PluginArgs):
    unknown: Literal["mean", "zero"] = "mean"


@register_plugin
class PlatformScore:
    NAME: ClassVar[str] = "platform"
    Args: ClassVar[type[PluginArgs]] = PlatformArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: PlatformArgs) -> FloatArray:
        return platform_scores(request.performance_by_code(table), table.platform_code, args.unknown)

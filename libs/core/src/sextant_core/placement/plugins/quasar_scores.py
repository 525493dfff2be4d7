"""Quasar's ranking scores (Quasar §4.1: "high performing platforms with minimal interference
first", "the least amount of resources", and packing "to better pack work in few servers").
They read the per-decision columns of `quasar_sizing` (`sized_cores`, `predicted_ratio`).

- `quasar-quality`: predicted quality of the server for this workload — its predicted
  performance at its sized cores over the requirement, capped at `cap` (≥ 1; above the cap a
  server is no better):  score = 100 · min(ratio, cap) / cap.
- `quasar-least-cores`: the least resources — 100 · c_min / c(s), where c_min is the smallest
  sized core count of any row (0 for rows sized 0).
- `quasar-packing`: best fit on cores — the server's core utilisation after placing the sized
  cores: 100 · (capacity − (free − sized)) / capacity (0 where sized = 0).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from ..framework import PluginArgs
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import CandidateTable, FloatArray, IntArray
from .quasar_sizing import RATIO, SIZED


def quality_scores(ratio: FloatArray, cap: float) -> FloatArray:
    out: FloatArray = 100.0 * np.clip(ratio, 0.0, cap) / cap
    return out


def least_cores_scores(sized: IntArray) -> FloatArray:
    pos = sized[sized > 0]
    if len(pos) == 0:
        return np.zeros(len(sized))
    out: FloatArray = np.where(sized > 0, 100.0 * float(pos.min()) / np.maximum(sized, 1), 0.0)
    return out


def packing_scores(cap_cores: IntArray, free_cores: IntArray, sized: IntArray) -> FloatArray:
    left = np.maximum(free_cores - sized, 0)
    out: FloatArray = np.where(sized > 0, 100.0 * (cap_cores - left) / np.maximum(cap_cores, 1), 0.0)
    return out


class QualityArgs(PluginArgs):
    cap: float = Field(1.1, ge=1.0, le=10.0)


@register_plugin
class QuasarQuality:
    NAME: ClassVar[str] = "quasar-quality"
    Args: ClassVar[type[PluginArgs]] = QualityArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: QualityArgs) -> FloatArray:
        return quality_scores(table.extra[RATIO], args.cap)


class _NoArgs(PluginArgs):
    pass


@register_plugin
class QuasarLeastCores:
    NAME: ClassVar[str] = "quasar-least-cores"
    Args: ClassVar[type[PluginArgs]] = _NoArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FloatArray:
        return least_cores_scores(table.extra[SIZED])


@register_plugin
class QuasarPacking:
    NAME: ClassVar[str] = "quasar-packing"
    Args: ClassVar[type[PluginArgs]] = _NoArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FloatArray:
        return packing_scores(table.cap_cores, table.free_cores, table.extra[SIZED])

"""`least-allocated` score (k8s `noderesources/least_allocated.go`, cores + memory): prefer the
server that keeps the largest fraction of its capacity free after taking the request.

    score_r = 100 · (free_r − request_r) / capacity_r, clipped to [0, 100], per resource r
    score   = (w_cores · score_cores + w_memory · score_memory) / (w_cores + w_memory)

Args: `cores_weight`, `memory_weight` (≥ 0, not both 0). The `least-loaded` baselines use it.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field, model_validator

from ..framework import PluginArgs
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import CandidateTable, FloatArray, IntArray


def least_allocated(cap_cores: IntArray, free_cores: IntArray, cap_memory_gb: FloatArray,
                    free_memory_gb: FloatArray, cores: int, memory_gb: float,
                    cores_weight: float = 1.0, memory_weight: float = 1.0) -> FloatArray:
    c = np.clip(100.0 * (free_cores - cores) / cap_cores, 0.0, 100.0)
    m = np.clip(100.0 * (free_memory_gb - memory_gb) / cap_memory_gb, 0.0, 100.0)
    out: FloatArray = (cores_weight * c + memory_weight * m) / (cores_weight + memory_weight)
    return out


class LeastAllocatedArgs(PluginArgs):
    cores_weight: float = Field(1.0, ge=0)
    memory_weight: float = Field(1.0, ge=0)

    @model_validator(mode="after")
    def _some_weight(self) -> LeastAllocatedArgs:
        if self.cores_weight + self.memory_weight <= 0:
            raise ValueError("cores_weight + memory_weight must be > 0")
        return self


@register_plugin
class LeastAllocated:
    NAME: ClassVar[str] = "least-allocated"
    Args: ClassVar[type[PluginArgs]] = LeastAllocatedArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: LeastAllocatedArgs) -> FloatArray:
        return least_allocated(table.cap_cores, table.free_cores, table.cap_memory_gb, table.free_memory_gb,
                               request.cores, request.memory_gb, args.cores_weight, args.memory_weight)

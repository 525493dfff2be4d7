"""`fit` filter: the server has the free cores and memory the request asks for (Paragon spec §3.2
[PROPOSAL]: hard capacity filters before the interference filters).

Memory is compared with a tolerance of 1e-9 GiB, the rounding `evolve` applies to used memory.
Best-effort residents' cores and memory count as used: no profile evicts them to make room.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..framework import FilterVerdict, PluginArgs, verdict
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import BoolArray, CandidateTable, FloatArray, IntArray

MEMORY_EPS_GB = 1e-9
NO_CORES, NO_MEMORY = 0, 1


def capacity_fit(free_cores: IntArray, free_memory_gb: FloatArray, cores: int,
                 memory_gb: float) -> tuple[BoolArray, IntArray]:
    """(pass mask, reason code): lacking cores is reported before lacking memory."""
    cores_ok = free_cores >= cores
    mem_ok = free_memory_gb + MEMORY_EPS_GB >= memory_gb
    return cores_ok & mem_ok, np.where(cores_ok, NO_MEMORY, NO_CORES).astype(np.int64)


@register_plugin
class Fit:
    NAME: ClassVar[str] = "fit"
    REASONS: ClassVar[tuple[str, ...]] = ("insufficient_cores", "insufficient_memory")
    Args: ClassVar[type[PluginArgs]] = PluginArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FilterVerdict:
        return verdict(*capacity_fit(table.free_cores, table.free_memory_gb, request.cores, request.memory_gb))

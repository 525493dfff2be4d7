"""`paragon-arq-pool`: keep the servers of the ARQ pools a workload may use (Paragon §4: "the
greedy scheduler only searches the pool of the app's queue, unless the app has been diverted").

The caller supplies each server's pool (extra column `arq_pool`, ints 0..9, the decile of its
headroom, `sextant_core.admission.quality`) and `below`, the lowest pool kept for a waiting class
above the workload's own (`admission.queues.reserved_from`; 10 = none reserved). A server passes
iff pool < below; a rejected one gets the constant reason `reserved_pool`. Without the column
every server passes.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from ..framework import FilterVerdict, PluginArgs, verdict
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import CandidateTable

POOL = "arq_pool"


class PoolArgs(PluginArgs):
    below: int = Field(10, ge=0, le=10)


@register_plugin
class ParagonArqPool:
    NAME: ClassVar[str] = "paragon-arq-pool"
    REASONS: ClassVar[tuple[str, ...]] = ("reserved_pool",)
    Args: ClassVar[type[PluginArgs]] = PoolArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: PoolArgs) -> FilterVerdict:
        pool = table.extra.get(POOL)
        n = len(table)
        if pool is None:
            return verdict(np.ones(n, dtype=np.bool_), np.zeros(n, dtype=np.int64))
        return verdict(pool < args.below, np.zeros(n, dtype=np.int64))

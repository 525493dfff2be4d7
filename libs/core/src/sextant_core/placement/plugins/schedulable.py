"""`schedulable` filter: only servers that are up and not drained take new work (k8s
`NodeUnschedulable`). Every profile starts with it (`make_profile` inserts it)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..framework import FilterVerdict, PluginArgs, verdict
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import BoolArray, CandidateTable, IntArray

DOWN, DRAINED = 0, 1


def unschedulable_codes(up: BoolArray, drained: BoolArray) -> tuple[BoolArray, IntArray]:
    """(pass mask, reason code): a down server reports `server_down` even when also drained."""
    return up & ~drained, np.where(~up, DOWN, DRAINED).astype(np.int64)


@register_plugin
class Schedulable:
    NAME: ClassVar[str] = "schedulable"
    REASONS: ClassVar[tuple[str, ...]] = ("server_down", "server_drained")
    Args: ClassVar[type[PluginArgs]] = PluginArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FilterVerdict:
        return verdict(*unschedulable_codes(table.up, table.drained))

"""The platform loop's starting reprovisioning policy (the full ladder is `adaptive.Adaptive`).

A QoS violation (a failed `QosVerdict`, routed here by the process manager as `ReviewWorkload`)
asks for a reclassification — profiling in place, then a re-plan against the new rows
(`WorkloadClassified.reclassification` → `PlaceWorkload(reason="reclassified")`). A lost server
needs nothing here: the process manager re-plans its residents directly.

[IMPL CHOICE] To avoid a reclassification storm on a workload that simply cannot meet its target,
requests are spaced exponentially: at the 2nd, 6th, 14th, 30th, ... violation (2^(k+1) − 2).
Pure: the decision depends on the workload's violation count only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sextant_contracts import events as ev

from ..state.model import ClusterState, WorkloadState

if TYPE_CHECKING:
    from ..context import DecisionContext


def due(violations: int) -> bool:
    """True at 2, 6, 14, 30, ... violations."""
    n = violations + 2
    return violations >= 2 and n & (n - 1) == 0


class ReclassifyOnViolation:
    def review(self, state: ClusterState, w: WorkloadState, reason: str,
               ctx: DecisionContext) -> Sequence[ev.Event]:
        if reason != "qos_violation" or not due(w.violations):
            return ()
        return (ev.ReclassificationRequested(at=ctx.at, workload_id=w.workload_id,
                                             decision=ctx.record("reprovisioning", w.workload_id),
                                             reason=f"qos_violation x{w.violations}"),)

"""The performance a target requires, in the classification's units (Quasar §2, §4.1).

`WorkloadClassified` rows hold performance "in the units the target states" (contracts/model.py):
instructions/s for an `InstructionRateTarget`, the highest QPS within the latency bound for a
`ThroughputLatencyTarget` (Quasar spec §9 item 13: "the max QPS sustainable under the latency QoS,
taken from the knee"), and 1/seconds for completion-time and deadline targets. So the required
aggregate performance R of a workload is:

| target | R | notes |
|---|---|---|
| instruction rate `ips` | ips | a rate: no correction for time already spent |
| throughput + p99 `qps` | qps | the peak load the service must carry within its bound |
| completion time `seconds` | 1 / (seconds − elapsed) | elapsed = now − submitted_at |
| deadline `at` | 1 / (at − now) | |

[IMPL CHOICE] elapsed time counts from *submission* (profiling and queueing included), not from
the start the contract's wording names: meeting the stricter reading meets both, and it is the
end-to-end time the papers' QoS counts (Paragon §6, Quasar §6). A target already out of reach
(no time left) requires ∞: the planner then places "as close as possible" (Quasar §3.1).

`margin` ≥ 0 asks for R·(1 + margin): head-room against prediction error and against the small
slowdowns the interference model expects below tolerance (tuned on seeds 1–5, docs/quality.md).

[IMPL CHOICE] unit fallback: a classifier that does not report in the target's units (e.g. the
twin's estimate port, whose rows are speeds relative to the fastest platform) is recognised when
the best single-node prediction and R differ by more than `UNIT_MISMATCH` (10⁴) in either
direction; R is then read *relative*: `QOS_FRACTION` (95 %) of the best single-node prediction —
Paragon's QoS definition ("95 % of the performance on its best server configuration", §2.3).
[IMPL CHOICE] "its best server configuration" is the best predicted platform at the workload's
*requested* cores (its own threads; the reference cores without a request), not the top of the
predicted scale-up curve: on a flat curve measured with noise the top is the luckiest draw, and a
requirement read from it asks for more than the workload's own configuration can give (measured
on the twin: most workloads became "as close as possible", docs/quality.md).
`Requirement.relative` says so, and the trace records it.

[IMPL CHOICE] planner 8.1 (`SizingParams.units = "kind"`): a factor of 10⁴ tells an instruction
rate (10⁹) from rows of relative speed (≈ 1), but not a completion-time target (1/seconds: 10⁻³ to
10⁻¹) nor a service's QPS (10² to 10⁵) from them — on quasar-ec2-200 with the estimate port every
analytics job was sized to one core ("met") and most services spread over 17–25 one-core nodes
("unreachable"). For those kinds the band is `UNIT_BAND` (20) instead: rows in the target's units
predict one node within that factor of what the job needs (an analytics job's target is set from
its own reference allocation, a service needs at most a few dozen nodes). And a relative
requirement of a multi-node kind is 95 % of the predicted aggregate of its *requested*
allocation (`PerformanceModel.best_allocation`), not of one node at the requested cores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sextant_contracts.model import (
    CompletionTimeTarget,
    DeadlineTarget,
    InstructionRateTarget,
    ThroughputLatencyTarget,
)

QOS_FRACTION = 0.95
UNIT_MISMATCH = 1e4
UNIT_BAND = 20.0  # planner 8.1: the band of the non-rate kinds (module docstring)


@dataclass(frozen=True, slots=True)
class Requirement:
    """Required aggregate performance `value` (∞ = unreachable), with the margin applied."""

    value: float
    kind: str  # rate | throughput | completion | deadline | none
    relative: bool = False
    base: float = 0.0  # before the margin

    @property
    def reachable(self) -> bool:
        return math.isfinite(self.value) and self.value > 0


def raw_requirement(target: Any, *, now: float, submitted_at: float) -> tuple[float, str]:
    """(R before margin, kind) of a target; (0, "none") when the workload has no known target."""
    if isinstance(target, InstructionRateTarget):
        return float(target.ips), "rate"
    if isinstance(target, ThroughputLatencyTarget):
        return float(target.qps), "throughput"
    if isinstance(target, CompletionTimeTarget):
        left = target.seconds - max(now - submitted_at, 0.0)
        return (1.0 / left if left > 0 else math.inf), "completion"
    if isinstance(target, DeadlineTarget):
        left = target.at - now
        return (1.0 / left if left > 0 else math.inf), "deadline"
    return 0.0, "none"


def requirement(target: Any, *, now: float, submitted_at: float, best_single: float,
                margin: float = 0.0, best_requested: float | None = None,
                unit_band: float | None = None) -> Requirement:
    """The requirement of `target` at `now`; `best_single` = the best single-node prediction
    (used to recognise rows that are not in the target's units, see the module doc);
    `best_requested` = the best platform's prediction at the workload's requested cores, the base
    of a relative requirement when given (else `best_single`); `unit_band` (planner 8.1): the
    factor beyond which a throughput, completion-time or deadline requirement is read relative
    (`UNIT_MISMATCH` when None, and always for an instruction rate)."""
    if margin < 0:
        raise ValueError("margin must be >= 0")
    r, kind = raw_requirement(target, now=now, submitted_at=submitted_at)
    band = UNIT_MISMATCH if unit_band is None or kind == "rate" else unit_band
    mismatch = math.isfinite(r) and best_single > 0 and not (1 / band <= r / best_single <= band)
    relative = kind == "none" or r == 0.0 or mismatch
    if relative:
        r = QOS_FRACTION * (best_single if best_requested is None else best_requested)
    return Requirement(value=r * (1.0 + margin), kind=kind, relative=relative, base=r)

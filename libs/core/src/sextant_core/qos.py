"""The QoS verdict rule, written once: how a measurement compares with a performance target.

Every judge uses it — the twin's agent (`sextant_sim.agent`) for each telemetry window, the
telemetry service (`sextant_telemetry.handlers`) for the windows it aggregates — so a verdict means
the same in the simulator, on the platform and in replay.

**Ratio to target** (≥ 1 ⟺ the target is met), by the target's type:

| target | ratio | measured |
|---|---|---|
| `instruction_rate` `ips` | ips_observed / ips | the window's mean instruction rate |
| `completion_time` `seconds` | seconds / projected | projected duration from start to finish: time since start + remaining work at the current rate |
| `deadline` `at` | (at − started_at) / projected | the time the deadline allows since the start over the projected duration |
| `throughput_latency` | share within the bound / 0.99 | a p99 bound is met when ≥ 99 % of the window's requests are within it |

A measurement that lacks what its target's row needs (a service has no remaining work, a
single-node job serves no requests) gives no ratio (`None`): which target a workload kind may carry
is `TARGETS_BY_KIND`, checked at the edge, so a judged workload always has one.

**Verdict**: met ⟺ ratio ≥ `MET_AT` (1.0). Targets already carry Paragon's slack ("95 % of the
performance on its best configuration", §2.3: the twin's targets are 95 % of the ideal), so the
verdict adds none. A window's verdict over several samples judges their mean ratio.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sextant_contracts.model import (
    CompletionTimeTarget,
    DeadlineTarget,
    InstructionRateTarget,
    ThroughputLatencyTarget,
    WorkloadKind,
)

MET_AT = 1.0
P99_SHARE = 0.99

# which target types a workload of each kind may carry (Quasar §2: single-node batch states a
# completion time or an instruction rate, distributed analytics a completion time, services a QPS
# with a tail-latency bound; Morpheus deadlines are completion times on the absolute clock)
TARGETS_BY_KIND: dict[WorkloadKind, tuple[str, ...]] = {
    WorkloadKind.BATCH: ("completion_time", "deadline", "instruction_rate"),
    WorkloadKind.ANALYTICS: ("completion_time", "deadline"),
    WorkloadKind.SERVICE: ("throughput_latency",),
}


@dataclass(frozen=True, slots=True)
class Measured:
    """One window of a workload as an agent measured it (seconds, in the time base of the target).

    `started_at`: when the workload started; `ips`: mean instruction rate over the window;
    `projected_s`: projected duration from start to finish at the current rate (None: open-ended,
    a service); `within_bound`: share 0..1 of the window's requests served within the latency
    bound (None: serves no requests)."""

    started_at: float
    ips: float | None = None
    projected_s: float | None = None
    within_bound: float | None = None


def target_fits(kind: WorkloadKind, target: Any) -> bool:
    """Whether a workload of `kind` may carry `target` (`TARGETS_BY_KIND`)."""
    return getattr(target, "type", None) in TARGETS_BY_KIND[kind]


def value_and_ratio(target: Any, m: Measured) -> tuple[float, float] | None:
    """(value in the target's units, ratio to target ≥ 0) of a window, or None when `m` does not
    measure what `target` needs. Values: instructions/s, projected seconds, or the share within
    the bound."""
    projected = m.projected_s
    if isinstance(target, InstructionRateTarget):
        return None if m.ips is None else (m.ips, m.ips / target.ips)
    if isinstance(target, CompletionTimeTarget):
        return None if projected is None else (projected, target.seconds / max(projected, 1e-9))
    if isinstance(target, DeadlineTarget):
        if projected is None:
            return None
        allowed = target.at - m.started_at
        return projected, max(allowed, 0.0) / max(projected, 1e-9)
    if isinstance(target, ThroughputLatencyTarget):
        return None if m.within_bound is None else (m.within_bound, m.within_bound / P99_SHARE)
    return None


def met(ratio: float) -> bool:
    """The verdict: the target is met when the ratio reaches `MET_AT`."""
    return ratio >= MET_AT

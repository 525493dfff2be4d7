"""Scoring detection against the twin's injected truths (evaluation, not policy).

Phases (Paragon §3.4 Table IV, Quasar §4.1):

- **truth**: every injected phase change (workload, time), recorded by the agent
  (`hooks.AdaptationHooks.phase_changed`).
- **reactive detection** = the share of *observable* phase changes followed, within the
  detection window W, by a reactive decision for that workload (a `ReclassificationRequested`,
  `AllocationAdjusted` or `MigrationDecided` whose reason starts with `reactive`). A change is
  observable when the workload is still running one full telemetry window after it (monitoring
  cannot see a change of a workload that ended first). [IMPL CHOICE] W = 2 telemetry periods: the
  window in which the change happens is partly before it, so the first window that shows it
  fully ends up to two periods later.
- **proactive detection** = among the phase changes whose new phase was probed at least once
  (before the next change and before any reactive detection of it), the share whose probes
  flagged a significant change — Paragon's denominator ("sampled applications with phases").
  `proactive_coverage` says how many changes were probed at all.
- **false positives**: proactive — flagged probes of workloads whose phase is the one they were
  classified in, over all probes of such workloads; reactive — reactive phase/mis-classification
  claims (`ReclassificationRequested`, reason `reactive`) on such workloads, over their
  observations.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sextant_contracts import events as ev


@dataclass(frozen=True, slots=True)
class PhaseScore:
    changes: int
    observable: int
    reactive_detected: int
    probed: int
    proactive_detected: int
    probes_unchanged: int
    proactive_false: int
    observations_unchanged: int
    reactive_false: int
    mean_reactive_delay_s: float | None

    def as_json(self) -> dict[str, Any]:
        def frac(a: int, b: int) -> float:
            return round(a / b, 4) if b else 0.0

        return {"reactive_detection": frac(self.reactive_detected, self.observable),
                "proactive_detection": frac(self.proactive_detected, self.probed),
                "proactive_coverage": frac(self.probed, self.changes),
                "false_positive_rate": frac(self.proactive_false, self.probes_unchanged),
                "reactive_false_positive_rate": frac(self.reactive_false, self.observations_unchanged),
                "phase_changes": self.changes, "observable_changes": self.observable,
                "reactive_detected": self.reactive_detected, "probed_changes": self.probed,
                "proactive_detected": self.proactive_detected, "probes_of_unchanged": self.probes_unchanged,
                "proactive_false_positives": self.proactive_false,
                "observations_of_unchanged": self.observations_unchanged,
                "reactive_false_positives": self.reactive_false,
                "mean_reactive_delay_s": None if self.mean_reactive_delay_s is None
                else round(self.mean_reactive_delay_s, 3)}


def _reason(e: ev.Event) -> str:
    return str(getattr(e, "reason", ""))


def score_phases(events: Sequence[ev.Event], changes: Sequence[tuple[str, float, int]], period_s: float) -> PhaseScore:
    """Score a run's events (in log order) against its phase changes (workload, time, new phase)."""
    window = 2.0 * period_s
    by_w: dict[str, list[float]] = defaultdict(list)
    for wid, at, _ph in changes:
        by_w[wid].append(at)
    ended: dict[str, float] = {}
    classified: dict[str, list[float]] = defaultdict(list)
    reactive: dict[str, list[float]] = defaultdict(list)
    reactive_claims: list[tuple[str, float]] = []
    probes: list[tuple[str, float, bool]] = []  # (workload, time, flagged)
    flagged_at: set[tuple[str, float]] = set()
    observations: list[tuple[str, float]] = []
    for e in events:
        wid = getattr(e, "workload_id", None)
        if wid is None:
            continue
        if isinstance(e, ev.WorkloadCompleted | ev.WorkloadFailed | ev.WorkloadRevoked):
            ended[wid] = e.at
        elif isinstance(e, ev.WorkloadClassified):
            classified[wid].append(e.at)
        elif isinstance(e, ev.PerformanceObserved):
            observations.append((wid, e.at))
        elif isinstance(e, ev.ReclassificationRequested | ev.AllocationAdjusted | ev.MigrationDecided):
            r = _reason(e)
            if r.startswith("reactive"):
                reactive[wid].append(e.at)
                if isinstance(e, ev.ReclassificationRequested):
                    reactive_claims.append((wid, e.at))
            elif r.startswith("proactive") and isinstance(e, ev.ReclassificationRequested):
                flagged_at.add((wid, e.at))
        elif isinstance(e, ev.InterferenceProbed) and e.purpose == "proactive":
            probes.append((wid, e.at, False))
    probes = [(w, t, (w, t) in flagged_at) for w, t, _ in probes]

    def phase_index(wid: str, t: float) -> int:  # number of changes at or before t
        return bisect.bisect_right(by_w.get(wid, []), t)

    def unchanged(wid: str, t: float) -> bool:
        cls = classified.get(wid, [])
        i = bisect.bisect_right(cls, t) - 1
        since = cls[i] if i >= 0 else float("-inf")
        return phase_index(wid, t) == phase_index(wid, since)

    observable = detected = probed = pro = 0
    delays: list[float] = []
    for wid, times in by_w.items():
        for j, t in enumerate(times):
            nxt = times[j + 1] if j + 1 < len(times) else float("inf")
            end = ended.get(wid, float("inf"))
            hit = next((d for d in reactive.get(wid, []) if t <= d <= min(t + window, nxt)), None)
            if end >= t + period_s:
                observable += 1
                if hit is not None:
                    detected += 1
                    delays.append(hit - t)
            horizon = min(nxt, end, hit if hit is not None else float("inf"))
            mine = [f for w, pt, f in probes if w == wid and t <= pt < horizon]
            if mine:
                probed += 1
                pro += int(any(mine))
    unchanged_probes = [f for w, t, f in probes if unchanged(w, t)]
    unchanged_obs = [1 for w, t in observations if unchanged(w, t)]
    false_claims = [1 for w, t in reactive_claims if unchanged(w, t)]
    return PhaseScore(changes=len(changes), observable=observable, reactive_detected=detected, probed=probed,
                      proactive_detected=pro, probes_unchanged=len(unchanged_probes),
                      proactive_false=sum(unchanged_probes), observations_unchanged=len(unchanged_obs),
                      reactive_false=len(false_claims),
                      mean_reactive_delay_s=sum(delays) / len(delays) if delays else None)

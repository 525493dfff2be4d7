"""The telemetry service: raw samples in, `PerformanceObserved` + `QosVerdict` out; `Tick`s.

**Windows.** Samples of one workload are grouped in consecutive windows of `verdict_window_s`
(by the samples' own time, not arrival). When a sample past the current window arrives, the window
closes: `PerformanceObserved` (mean value, mean ratio to target) and `QosVerdict` (the core's rule,
`sextant_core.qos.met`, on the mean ratio — the twin's agent judges its windows with the same). The outputs are tracked under the window's id (`workload:window-index`), so a
redelivery after a crash re-closes the same window into nothing new. [IMPL CHOICE] Samples of a
window still open when the process dies are not recovered beyond what Kafka redelivers (the
offsets were committed); the next window's verdict is unaffected.

**The final window.** A workload's last window has no later sample to close it: once the log says
the workload *completed*, its open window is closed into a final verdict — when a late sample of
it arrives, or at the next sweep (`finish`, after each catch-up) — so every workload that ran
long enough to be sampled is judged, however short it was (`lifecycle` allows `PerformanceObserved`
and `QosVerdict` after `WorkloadCompleted`; the process manager reviews nothing for them). Samples
of workloads that failed, were revoked or are not yet running are dropped. A workload re-placed
while it runs (a reclassification's or a failed server's re-plan) is `placed` until the agent
reports it started again, and it keeps running and being sampled meanwhile: `placed` is judged
like `running` (the agent samples only workloads it started, so a `placed` one has run).

**Ticks.** Every `tick_period_s` the service appends `Tick(seq)` to the `clock` stream at version
`seq + 1` with optimistic concurrency: two telemetry instances cannot log the same tick twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sextant_contracts import events as ev
from sextant_contracts.model import RawSample
from sextant_core import qos
from sextant_core.domain.lifecycle import TERMINAL, WorkloadPhase
from sextant_core.profiles import policy_set
from sextant_core.workflow import Decider

from .settings import Settings

JUDGED = frozenset({WorkloadPhase.RUNNING, WorkloadPhase.PLACED, WorkloadPhase.COMPLETED})


def make_decider(settings: Settings) -> Decider:
    """Telemetry decides nothing; its decider only folds the log (targets and phases)."""
    return Decider("telemetry", policy_set(settings.policy_profile))


@dataclass
class Window:
    index: int
    values: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    offered: list[float | None] = field(default_factory=list)
    last_at: float = 0.0


class Aggregator:
    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.open: dict[str, Window] = {}

    def add(self, s: RawSample, phase: WorkloadPhase | None) -> list[tuple[str, list[ev.Event]]]:
        """Add a sample of a workload in `phase` (the log's); returns (window id, outputs) for
        every window it closed."""
        judged = phase in JUDGED
        idx = int(s.at // self.window_s)
        w = self.open.get(s.workload_id)
        out: list[tuple[str, list[ev.Event]]] = []
        if w is not None and idx > w.index:
            if judged and w.values:
                out.append(self._close(s.workload_id, w))
            w = None
        if w is None:
            w = self.open[s.workload_id] = Window(index=idx)
        if idx == w.index:
            w.values.append(s.value)
            w.ratios.append(s.ratio_to_target)
            w.offered.append(s.offered)
            w.last_at = max(w.last_at, s.at)
        if phase == WorkloadPhase.COMPLETED:
            out.extend(self.finish(lambda _: phase, only=s.workload_id))
        elif not judged:
            self.open.pop(s.workload_id, None)
        return out

    def finish(self, phase_of: Callable[[str], WorkloadPhase | None],
               only: str | None = None) -> list[tuple[str, list[ev.Event]]]:
        """Close (final verdict) the open windows of workloads the log shows completed; drop the
        windows of workloads that ended otherwise."""
        out: list[tuple[str, list[ev.Event]]] = []
        for wid in [only] if only is not None else sorted(self.open):
            w = self.open.get(wid)
            phase = phase_of(wid)
            if w is None or phase not in TERMINAL:
                continue
            del self.open[wid]
            if phase == WorkloadPhase.COMPLETED and w.values:
                out.append(self._close(wid, w))
        return out

    def _close(self, wid: str, w: Window) -> tuple[str, list[ev.Event]]:
        value = sum(w.values) / len(w.values)
        ratio = sum(w.ratios) / len(w.ratios)
        offered = None if any(o is None for o in w.offered) else sum(w.offered) / len(w.offered)  # type: ignore[arg-type]
        at = w.last_at
        return f"{wid}:{w.index}", [
            ev.PerformanceObserved(at=at, workload_id=wid, value=value, ratio_to_target=ratio, offered=offered),
            ev.QosVerdict(at=at, workload_id=wid, met=qos.met(ratio), ratio_to_target=ratio,
                          window_s=self.window_s)]


def phase_of(decider: Decider, workload_id: str) -> WorkloadPhase | None:
    w = decider.state.workloads.get(workload_id)
    return None if w is None else w.phase


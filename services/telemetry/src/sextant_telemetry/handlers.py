"""The telemetry service: raw samples in, `PerformanceObserved` + `QosVerdict` out; `Tick`s.

**Windows.** Samples of one workload are grouped in consecutive windows of `verdict_window_s`
(by the samples' own time, not arrival). When a sample past the current window arrives, the window
closes: `PerformanceObserved` (mean value, mean ratio to target) and `QosVerdict` (met ⟺ mean ratio
≥ `qos_margin`). The outputs are tracked under the window's id (`workload:window-index`), so a
redelivery after a crash re-closes the same window into nothing new. [IMPL CHOICE] Samples of a
window still open when the process dies are not recovered beyond what Kafka redelivers (the
offsets were committed); the next window's verdict is unaffected. Only workloads the log shows
running get verdicts; late ones are folded as no-ops anyway (`lifecycle.LATE_FACTS`).

**Ticks.** Every `tick_period_s` the service appends `Tick(seq)` to the `clock` stream at version
`seq + 1` with optimistic concurrency: two telemetry instances cannot log the same tick twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sextant_contracts import events as ev
from sextant_contracts.model import RawSample
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.profiles import policy_set
from sextant_core.workflow import Decider

from .settings import Settings


def make_decider(settings: Settings) -> Decider:
    """Telemetry decides nothing; its decider only folds the log (targets and phases)."""
    return Decider("telemetry", policy_set(settings.policy_profile))


@dataclass
class Window:
    index: int
    values: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    last_at: float = 0.0


class Aggregator:
    def __init__(self, window_s: float, qos_margin: float) -> None:
        self.window_s = window_s
        self.qos_margin = qos_margin
        self.open: dict[str, Window] = {}

    def add(self, s: RawSample, running: bool) -> list[tuple[str, list[ev.Event]]]:
        """Add a sample; returns (window id, outputs) for every window it closed."""
        idx = int(s.at // self.window_s)
        w = self.open.get(s.workload_id)
        out: list[tuple[str, list[ev.Event]]] = []
        if w is not None and idx > w.index:
            if running and w.values:
                out.append(self._close(s.workload_id, w))
            w = None
        if w is None:
            w = self.open[s.workload_id] = Window(index=idx)
        if idx == w.index:
            w.values.append(s.value)
            w.ratios.append(s.ratio_to_target)
            w.last_at = max(w.last_at, s.at)
        if not running:
            self.open.pop(s.workload_id, None)
        return out

    def _close(self, wid: str, w: Window) -> tuple[str, list[ev.Event]]:
        value = sum(w.values) / len(w.values)
        ratio = sum(w.ratios) / len(w.ratios)
        at = w.last_at
        return f"{wid}:{w.index}", [
            ev.PerformanceObserved(at=at, workload_id=wid, value=value, ratio_to_target=ratio),
            ev.QosVerdict(at=at, workload_id=wid, met=ratio >= self.qos_margin, ratio_to_target=ratio,
                          window_s=self.window_s)]


def is_running(decider: Decider, workload_id: str) -> bool:
    w = decider.state.workloads.get(workload_id)
    return w is not None and w.phase == WorkloadPhase.RUNNING

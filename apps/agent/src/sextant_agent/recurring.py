"""What the agent reports about recurring jobs: `RecurringRunObserved` when a named run ends.

`RunRecorder` watches the agent's own commands and facts (executor-agnostic: it never asks the
executor anything) and, when a workload with a name ends (`WorkloadCompleted`: succeeded;
`WorkloadFailed`: failed), returns one `RecurringRunObserved` for the template its name belongs to
(`recurring.decisions.template_id(tenant, name)`), to be appended with the ending fact. Workloads
without a name are nobody's template and report nothing.

What the agent knows, in the log's time base: `instance` (the workload id), `submit_s` (the
submission), `start_s` (its `WorkloadStarted`), `end_s` (the ending fact), `succeeded`, and its
skyline: the cores it held, as containers of one core, per `step_s` from its start (a start or
resize changes it; at most one day of steps). What it cannot know stays None: `input_available_s`
(the last write to its inputs) and `first_read_s` / `reader_period_s` (the first read of its
output by a consumer). The SLO inference needs reads, so from the agent's runs alone a template is
detected but no contract is inferred (docs/recurring/platform.md).

Off by default (`SEXTANT_AGENT_RECURRING_RUNS`): logs recorded without it are unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.model import Allocation
from sextant_core.recurring.decisions import template_id
from sextant_core.state.model import ClusterState

STEP_S = 60.0


@dataclass
class _Run:
    start_s: float
    changes: list[tuple[float, int]] = field(default_factory=list)  # (time, cores held from then on)
    memory_per_core: float = 8.0


def _cores_and_memory(a: Allocation) -> tuple[int, float]:
    cores = a.total_cores
    return cores, (sum(x.memory_gb for x in a.assignments) / cores if cores else 8.0)


def skyline(start_s: float, end_s: float, changes: Sequence[tuple[float, int]], step_s: float = STEP_S
            ) -> tuple[float, ...]:
    """Cores held in each `step_s` step from `start_s` to `end_s` (the time-weighted mean of the
    step, rounded to 1e-6), from (time, cores from then on) changes in time order; at most
    `rc.MAX_STEPS` steps."""
    n = min(max(math.ceil((end_s - start_s) / step_s - 1e-9), 1), rc.MAX_STEPS)
    out = []
    for k in range(n):
        lo, hi = start_s + k * step_s, min(start_s + (k + 1) * step_s, max(end_s, start_s + step_s))
        area = 0.0
        for i, (t, c) in enumerate(changes):
            t_next = changes[i + 1][0] if i + 1 < len(changes) else math.inf
            area += c * max(0.0, min(hi, t_next) - max(lo, t))
        out.append(round(area / (hi - lo), 6) if hi > lo else 0.0)
    return tuple(out)


class RunRecorder:
    """Turns a named workload's start, resizes and end into `RecurringRunObserved` (module doc)."""

    def __init__(self, enabled: bool = True, step_s: float = STEP_S) -> None:
        self.enabled = enabled
        self.step_s = step_s
        self._runs: dict[str, _Run] = {}

    def command(self, c: cmd.Command, at: float) -> None:
        """An agent command executed at `at` (log time): a resize changes the cores held."""
        if self.enabled and isinstance(c, cmd.ResizeWorkload) and c.workload_id in self._runs:
            run = self._runs[c.workload_id]
            cores, run.memory_per_core = _cores_and_memory(c.allocation)
            run.changes.append((max(at, run.start_s), cores))

    def facts(self, facts: Sequence[ev.Event], state: ClusterState) -> list[ev.Event]:
        """The `RecurringRunObserved` that `facts` (just reported by the executor) call for."""
        if not self.enabled:
            return []
        out: list[ev.Event] = []
        for f in facts:
            if isinstance(f, ev.WorkloadStarted):
                cores, mem = _cores_and_memory(f.allocation)
                self._runs[f.workload_id] = _Run(f.at, [(f.at, cores)], mem)
            elif isinstance(f, ev.WorkloadCompleted | ev.WorkloadFailed):
                r = self._ended(f.workload_id, f.at, isinstance(f, ev.WorkloadCompleted), state)
                if r is not None:
                    out.append(r)
        return out

    def _ended(self, wid: str, end: float, ok: bool, state: ClusterState) -> rc.RecurringRunObserved | None:
        run = self._runs.pop(wid, None)
        w = state.workloads.get(wid)
        if w is None or not w.name.strip():
            return None
        start = run.start_s if run is not None else w.started_at
        if start is None:
            return None  # ended before it ever ran (refused, failed at placement): not a run
        submit = min(w.submitted_at, start)
        end = max(end, start)
        changes = run.changes if run is not None else [(start, w.allocation.total_cores if w.allocation else 0)]
        mem = run.memory_per_core if run is not None else 8.0
        tid = template_id(w.tenant, w.name)
        return rc.RecurringRunObserved(
            at=end, template_id=tid, tenant=w.tenant, name=w.name[:200], instance=wid[:128],
            submit_s=submit, start_s=start, end_s=end, succeeded=ok,
            skyline=skyline(start, end, changes, self.step_s), container_cores=1.0,
            container_memory_gb=min(max(round(mem, 6), 1e-6), 4096.0))

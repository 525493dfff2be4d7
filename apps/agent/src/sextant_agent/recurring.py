"""What the agent reports about recurring jobs: `RecurringRunObserved` when a named run ends, and
`RecurringInstanceObserved` (DRA's input) for a running instance of a reserved template each plan step.

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

Instances (`instances`): at every plan-step boundary b (a multiple of the plan's `step_s`, 60 s of
log time; `step` = ⌊b / step_s⌋ mod the plan's 1-day window, the convention of
`recurring.decisions.extend`), one `RecurringInstanceObserved` (at b) per running named workload
whose template holds a reservation in the agent's view of the state, in workload id order:
`used` = the cores it holds at b (one-core containers; its start and resizes up to b, or the
log's allocation for a run started before an agent restart) and `pending` = its submission's
`requested_cores` minus `used`, never negative, 0 without a request [choice: what it asked for
and was not granted, from what the agent already knows — the executor is asked nothing new; a
job that would use more than it requested is not seen]. Boundaries are observed in log-time
order with the facts: `report` puts the observations of the boundaries before the facts' time
ahead of them (so an instance's observations never follow its run), and the agent's clock
observes the boundaries up to now after each advance; a boundary is observed once, from the
first one at or after the recorder's first call (after a gap longer than the window, only the
last window's).

Off by default, one setting for both facts (`SEXTANT_AGENT_RECURRING_RUNS`): an instance's DRA
extensions are released by its `RecurringRunObserved`, so instances are never recorded without
runs. Logs recorded without it are unchanged.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.model import Allocation
from sextant_core.domain.lifecycle import TERMINAL, WorkloadPhase
from sextant_core.recurring.decisions import PARAMS, template_id
from sextant_core.state.model import ClusterState, WorkloadState

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


def held_at(changes: Sequence[tuple[float, int]], at: float) -> int:
    """Cores held at `at` from (time, cores from then on) changes in time order: the last change at
    or before `at` (a change at `at` counts); 0 before the first."""
    held = 0
    for t, c in changes:
        if t > at:
            break
        held = c
    return held


def pending_of(w: WorkloadState, used: int) -> int:
    """Containers `w` asked for and was not granted (module doc [choice]): its submission's
    `requested_cores` minus `used`, never negative; 0 without a request."""
    return max((w.requested_cores or 0) - used, 0)


def plan_step(boundary_s: float, step_s: float = float(PARAMS.step_s), window_steps: int = PARAMS.window_steps) -> int:
    """The plan's window step of a log time: ⌊t / step_s⌋ mod `window_steps` (1 day of minutes)."""
    return int(math.floor(boundary_s / step_s)) % window_steps


class RunRecorder:
    """Turns a named workload's start, resizes and end into `RecurringRunObserved`, and a running
    instance of a reserved template into `RecurringInstanceObserved` every plan step (module doc)."""

    def __init__(self, enabled: bool = True, step_s: float = STEP_S, plan_step_s: float = float(PARAMS.step_s),
                 window_steps: int = PARAMS.window_steps) -> None:
        self.enabled = enabled
        self.step_s = step_s
        self.plan_step_s = plan_step_s
        self.window_steps = window_steps
        self._runs: dict[str, _Run] = {}
        self._gone: set[str] = set()  # runs reported ended that the agent's state may still show running
        self._next: int | None = None  # index k of the next plan-step boundary to observe (at k × plan_step_s)

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

    def report(self, facts: Sequence[ev.Event], state: ClusterState) -> list[ev.Event]:
        """`facts` just reported by the executor, preceded by the instance observations of the
        boundaries before their time and followed by the runs they end: what the agent appends."""
        if not self.enabled or not facts:
            return list(facts)
        due: list[ev.Event] = list(self.instances(facts[0].at, state, inclusive=False))
        return due + list(facts) + self.facts(facts, state)

    def instances(self, until: float, state: ClusterState, *, inclusive: bool = True
                  ) -> list[rc.RecurringInstanceObserved]:
        """The `RecurringInstanceObserved` of every plan-step boundary not observed yet up to
        `until` (log time; `inclusive`: a boundary at `until` too), in time order (module doc)."""
        if not self.enabled:
            return []
        s = self.plan_step_s
        if self._next is None:
            self._next = math.ceil(until / s)
        last = math.floor(until / s) if inclusive else math.ceil(until / s) - 1
        if last - self._next + 1 > self.window_steps:
            self._next = last - self.window_steps + 1
        out: list[rc.RecurringInstanceObserved] = []
        for k in range(self._next, last + 1):
            out.extend(self._observe(k * s, state))
        self._next = max(self._next, last + 1)
        return out

    def _observe(self, at: float, state: ClusterState) -> list[rc.RecurringInstanceObserved]:
        self._gone = {wid for wid in self._gone if (w := state.workloads.get(wid)) is not None
                      and w.phase not in TERMINAL}
        held: dict[str, int] = {}
        for wid, run in list(self._runs.items()):
            w = state.workloads.get(wid)
            if w is not None and w.phase in TERMINAL:  # ended without an ending fact (revoked)
                del self._runs[wid]
            elif run.start_s <= at:
                held[wid] = held_at(run.changes, at)
        for w in state.live_workloads():  # started before an agent restart: the log's allocation
            if (w.phase == WorkloadPhase.RUNNING and w.workload_id not in self._runs and w.workload_id not in
                    self._gone and w.started_at is not None and w.started_at <= at):
                held[w.workload_id] = w.allocation.total_cores if w.allocation else 0
        out = []
        for wid, used in sorted(held.items()):
            w = state.workloads.get(wid)
            if w is None or not w.name.strip():
                continue
            t = state.recurring.templates.get(template_id(w.tenant, w.name))
            if t is None or t.reservation is None:
                continue
            out.append(rc.RecurringInstanceObserved(
                at=at, template_id=t.template_id, instance=wid[:128],
                step=plan_step(at, self.plan_step_s, self.window_steps), used=used, pending=pending_of(w, used)))
        return out

    def _ended(self, wid: str, end: float, ok: bool, state: ClusterState) -> rc.RecurringRunObserved | None:
        run = self._runs.pop(wid, None)
        self._gone.add(wid)
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

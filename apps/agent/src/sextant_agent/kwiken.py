"""What the agent reports about multi-stage services (Kwiken): one `StageLatenciesObserved` per
running service with declared stages every window (docs/kwiken/platform.md, "From the twin").

Windows: at every boundary b = k × `window_s` (60 s of log time) the agent observes the window
[b − `window_s`, b) of each RUNNING service workload of its state view that has a
`ServiceStagesDeclared` and started before b, in workload id order: one event at b with
`samples` (≤ `kw.MAX_SAMPLES`) latencies per declared stage. Boundaries are observed in log-time
order with the facts, as `recurring.RunRecorder` does: the windows ending before a fact go ahead
of it, the clock observes the boundaries up to each advance; a boundary is observed once, from the
first one at or after the sampler's first call (after a gap longer than `MAX_BEHIND` windows, only
the last `MAX_BEHIND`: the fold keeps 2 000 samples per stage, older windows would be dropped).

The twin's requests (a pure function of the workload id, the stage name and the window index):

- a stage's latency law is the Kwiken request simulator's (`sextant_sim.kwiken.families`):
  `draw_family` seeded by (workload id, stage name), with the stage's declared `fanout` as its
  responders (a fan-out stage answers with its slowest responder, `draw_stage`); it does not drift;
- each window draws, per stage, `samples` requests (seeded by workload id, stage name, window
  index): the first response, two independent reissue draws and a uniform — always all four, so a
  window's requests are the same with or without a plan;
- when a `KwikenPlanDecided` is in force (the state view's latest), each stage serves them under
  its entry (`sextant_core.kwiken.reissue.apply_plan`: policy, fraction, timeout), so the observed
  tail is the plan's;
- a partial-answer stage (`StageSpec.partial`) also reports `responder_ms`: `samples` single
  responders' latencies (seeded by workload id, stage name, window index); with a plan entry that
  has partial-answer parameters in force, its served latency is the stopping time
  `min(T_c, max(T_min, t_p + T_d), t_all)` of each request (`partial_samples`: `t_p`, the time
  the first ⌈p·n⌉ of its n responders answered, and `t_all`, the slowest, sampled exactly as the
  order statistics of n draws — no n-wide matrix; other draws than the plan-free windows').

What a window reports is what `StageSamples` documents: each stage's latency as served. A plan's
reissues are extra load on the service's twin servers (`TwinExecutor(reissue_load=...)`). Off by
default (`SEXTANT_AGENT_KWIKEN_SAMPLES`): logs recorded without it are unchanged.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
from sextant_contracts import kwiken as kw
from sextant_contracts.model import WorkloadKind
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.kwiken.partial import PartialPolicy
from sextant_core.kwiken.reissue import NO_REISSUE, StagePlan, apply_plan
from sextant_core.state.model import ClusterState
from sextant_sim.kwiken.families import StageFamily, at_log_survival, draw, draw_family, draw_stage

WINDOW_S = 60.0
SAMPLES = kw.MAX_SAMPLES
MAX_BEHIND = 4


def _seed(*parts: str) -> list[int]:
    """A stable seed sequence of strings (sha-256, four 32-bit words): no Python `hash`."""
    d = hashlib.sha256("\x00".join(parts).encode()).digest()
    return [int.from_bytes(d[i:i + 4], "big") for i in range(0, 16, 4)]


def stage_law(workload_id: str, stage: kw.StageSpec) -> StageFamily:
    """The twin's latency law of `stage` of `workload_id` (module doc), the same at every call."""
    return draw_family(np.random.default_rng(_seed("law", workload_id, stage.name)), stage.fanout)


def stage_plan(entry: kw.StagePlanEntry | None) -> StagePlan:
    """The run-time plan of a stage's plan entry (no entry, `none` or fraction 0: no reissue)."""
    if entry is None or entry.policy == "none" or entry.fraction <= 0:
        return NO_REISSUE
    return StagePlan(entry.policy, entry.fraction, math.inf if entry.timeout_ms is None else entry.timeout_ms)


def partial_policy(entry: kw.StagePlanEntry | None) -> PartialPolicy | None:
    """The stopping rule of a stage's plan entry; None without partial-answer parameters."""
    if entry is None or entry.partial_p is None:
        return None
    inf = math.inf
    return PartialPolicy("kwiken", t_c=inf if entry.partial_t_c_ms is None else entry.partial_t_c_ms,
                         t_d=inf if entry.partial_t_d_ms is None else entry.partial_t_d_ms, p=entry.partial_p,
                         t_min=0.0 if entry.partial_t_min_ms is None else entry.partial_t_min_ms)


def partial_samples(workload_id: str, stage: kw.StageSpec, window: int, policy: PartialPolicy,
                    n: int = SAMPLES) -> tuple[float, ...]:
    """The latencies (ms, rounded to 1 µs) of `n` requests of partial-answer `stage` in window
    `window` stopped by `policy` (module doc). Of m responders, the k-th fastest (k = ⌈p·m⌉, as
    `Responders.t_fraction`) answers at survival level W ~ Beta(m − k + 1, k), the slowest at
    W · (1 − V^(1/(m − k))), V uniform (the m − k others are uniform above it)."""
    law = stage_law(workload_id, stage)
    m = stage.fanout
    k = max(1, math.ceil(policy.p * m - 1e-9))
    rng = np.random.default_rng([*_seed("partial", workload_id, stage.name), window])
    w = rng.beta(m - k + 1, k, n)
    v = rng.random(n)
    with np.errstate(divide="ignore"):
        s_all = w * -np.expm1(np.log(v) / (m - k)) if k < m else w
        t_k = at_log_survival(law, np.log(w))
        t_all = at_log_survival(law, np.log(s_all))
    mid = np.maximum(policy.t_min, t_k + policy.t_d) if math.isfinite(policy.t_d) else np.full(n, math.inf)
    stop = np.minimum(np.minimum(policy.t_c, mid), t_all)
    return tuple(float(x) for x in np.round(stop, 3))


def responder_samples(workload_id: str, stage: kw.StageSpec, window: int, n: int = SAMPLES) -> tuple[float, ...]:
    """`n` single responders' latencies (ms, rounded to 1 µs) of `stage` in window `window`."""
    rng = np.random.default_rng([*_seed("responders", workload_id, stage.name), window])
    return tuple(float(x) for x in np.round(draw(stage_law(workload_id, stage), n, rng), 3))


def window_samples(workload_id: str, stage: kw.StageSpec, window: int, plan: StagePlan = NO_REISSUE,
                   n: int = SAMPLES) -> tuple[float, ...]:
    """The latencies (ms, rounded to 1 µs) of `n` requests of `stage` in window `window`, served
    under `plan` (module doc)."""
    law = stage_law(workload_id, stage)
    rng = np.random.default_rng([*_seed("window", workload_id, stage.name), window])
    x = draw_stage(law, n, rng)
    alt = np.stack([draw_stage(law, n, rng), draw_stage(law, n, rng)])
    u = rng.random(n)
    y, _reissues = apply_plan(x, alt, u, plan)
    return tuple(float(v) for v in np.round(y, 3))


def observe_window(workload_id: str, declared: kw.ServiceStages, plan: kw.KwikenPlanDecided | None,
                   window: int, window_s: float = WINDOW_S, n: int = SAMPLES) -> kw.StageLatenciesObserved:
    """The `StageLatenciesObserved` of window `window` ([window × window_s, + window_s), at its end)."""
    entries = {} if plan is None else {e.stage: e for e in plan.stages}
    stages = tuple(_stage_window(workload_id, s, entries.get(s.name), window, n) for s in declared.stages)
    start = window * window_s
    return kw.StageLatenciesObserved(at=start + window_s, workload_id=workload_id, window_start_s=start,
                                     window_s=window_s, stages=stages)


def _stage_window(workload_id: str, stage: kw.StageSpec, entry: kw.StagePlanEntry | None, window: int,
                  n: int) -> kw.StageSamples:
    """One stage's samples of a window under its plan entry (module doc)."""
    stop = partial_policy(entry) if stage.partial else None
    served = (window_samples(workload_id, stage, window, stage_plan(entry), n) if stop is None
              else partial_samples(workload_id, stage, window, stop, n))
    responders = responder_samples(workload_id, stage, window, n) if stage.partial else ()
    return kw.StageSamples(stage=stage.name, samples_ms=served, responder_ms=responders)


class StageSampler:
    """Observes the Kwiken windows of running services with declared stages (module doc)."""

    def __init__(self, enabled: bool = True, window_s: float = WINDOW_S, samples: int = SAMPLES) -> None:
        if not 1 <= samples <= kw.MAX_SAMPLES:
            raise ValueError(f"samples must be in [1, {kw.MAX_SAMPLES}], got {samples}")
        self.enabled = enabled
        self.window_s = window_s
        self.samples = samples
        self._next: int | None = None  # index k of the next boundary to observe (at k × window_s)

    def windows(self, until: float, state: ClusterState, *, inclusive: bool = True
                ) -> list[kw.StageLatenciesObserved]:
        """The windows of every boundary not observed yet up to `until` (log time; `inclusive`: a
        boundary at `until` too), in time order, then workload id order."""
        if not self.enabled:
            return []
        s = self.window_s
        if self._next is None:
            self._next = max(math.ceil(until / s), 1)
        last = math.floor(until / s) if inclusive else math.ceil(until / s) - 1
        if last - self._next + 1 > MAX_BEHIND:
            self._next = last - MAX_BEHIND + 1
        out: list[kw.StageLatenciesObserved] = []
        for k in range(self._next, last + 1):
            out.extend(self._observe(k, state))
        self._next = max(self._next, last + 1)
        return out

    def _observe(self, k: int, state: ClusterState) -> list[kw.StageLatenciesObserved]:
        boundary = k * self.window_s
        out = []
        for wid, svc in sorted(state.kwiken.services.items()):
            w = state.workloads.get(wid)
            if (w is None or w.kind != WorkloadKind.SERVICE or w.phase != WorkloadPhase.RUNNING
                    or w.started_at is None or w.started_at >= boundary):
                continue
            out.append(observe_window(wid, svc.declared, svc.plan, k - 1, self.window_s, self.samples))
        return out

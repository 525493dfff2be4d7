"""Kwiken on the platform: the fold of a service's stages and samples, the drift test and the plan
decision (docs/kwiken/platform.md). Pure: functions of the state and an explicit seed.

Fold (`KwikenState`): per service its `ServiceStagesDeclared` (the latest replaces the earlier),
per stage the newest `WINDOW` latency samples as served and, for a partial-answer stage, the newest
`WINDOW` single-responder samples (`StageSamples.responder_ms`; bounded memory: `WINDOW` floats
each), its latest `KwikenPlanDecided` and the samples that plan was computed from.

What a partial-answer stage is fitted and drift-tested on (`basis`): its responder samples when it
has `MIN_SAMPLES` of them, else its served samples read as one responder's latencies (windows
recorded before responder samples existed: the reading those logs' plans were decided with).

Drift test [choice]: a stage has drifted when a two-sample Kolmogorov–Smirnov test rejects that
its current samples and those the last plan used come from one distribution, at `ALPHA` = 0.01
family-wise over the service's N stages (Bonferroni: α / N per stage, so that a steady 150-stage
service is not re-planned at most windows by chance; asymptotic critical value
`c(α/N)·sqrt((n + m)/(n m))`, `c(a) = sqrt(−ln(a / 2) / 2)`). It is run on every
`StageLatenciesObserved` window, never on a timer, on each stage's `basis` (a partial-answer
stage's responders are not changed by its plan, its served latencies are). A plan needs
`MIN_SAMPLES` per stage.

Plan: reissue curves per stage (`reissue.reissue_curve`, seeded) for stages without partial
answers, SumVar (γ = 3) over costs normalised to sum 1 with the reissue budget, `plan_stage` per
stage; a partial-answer stage gets Kwiken's stopping rule (`partial.kwiken_policy`) at the loss
budget on `PARTIAL_REQUESTS` requests × its fan-out responders drawn i.i.d. from its `basis`
[assumption: responders are independent and alike].
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from immutables import Map
from sextant_contracts import kwiken as kw

from .partial import Responders, kwiken_policy
from .reissue import plan_stage, reissue_curve
from .sumvar import sumvar

WINDOW = 2000
MIN_SAMPLES = 200
ALPHA = 0.01
PARTIAL_REQUESTS = 400
GAMMA = 3.0


@dataclass(frozen=True)
class ServiceKwiken:
    """One service's Kwiken state (module doc)."""

    declared: kw.ServiceStagesDeclared
    samples: tuple[tuple[float, ...], ...]
    plan: kw.KwikenPlanDecided | None = None
    plan_samples: tuple[tuple[float, ...], ...] = ()
    responders: tuple[tuple[float, ...], ...] = ()  # per declared stage (empty: none yet)
    plan_responders: tuple[tuple[float, ...], ...] = ()

    def basis(self, i: int, *, used: bool = False) -> tuple[float, ...]:
        """Stage `i`'s samples the plan and the drift test read (module doc); `used`: as the plan in
        force saw them."""
        samples, responders = (self.plan_samples, self.plan_responders) if used else (self.samples, self.responders)
        if self.declared.stages[i].partial and i < len(responders) and len(responders[i]) >= MIN_SAMPLES:
            return responders[i]
        return samples[i]


@dataclass(frozen=True)
class KwikenState:
    services: Map[str, ServiceKwiken] = field(default_factory=Map)

    def get(self, workload_id: str) -> ServiceKwiken | None:
        return self.services.get(workload_id)


def _with(state: KwikenState, wid: str, svc: ServiceKwiken) -> KwikenState:
    return KwikenState(state.services.set(wid, svc))


def evolve_kwiken(state: KwikenState, event: kw.ServiceStagesDeclared | kw.StageLatenciesObserved
                  | kw.KwikenPlanDecided) -> KwikenState:
    """Fold one Kwiken event (samples of a service without stages, or of an unknown stage, are dropped)."""
    wid = event.workload_id
    svc = state.get(wid)
    if isinstance(event, kw.ServiceStagesDeclared):
        if svc is None:
            return _with(state, wid, ServiceKwiken(event, tuple(() for _ in event.stages)))
        names = [s.name for s in svc.declared.stages]
        return _with(state, wid, replace(svc, declared=event, samples=_by_name(names, svc.samples, event),
                                         responders=_by_name(names, svc.responders, event)))
    if svc is None:
        return state
    if isinstance(event, kw.StageLatenciesObserved):
        idx = svc.declared.index()
        new = list(svc.samples)
        resp = list(svc.responders) or [() for _ in new]
        for st in event.stages:
            i = idx.get(st.stage)
            if i is not None:
                new[i] = (new[i] + st.samples_ms)[-WINDOW:]
                if st.responder_ms:
                    resp[i] = (resp[i] + st.responder_ms)[-WINDOW:]
        return _with(state, wid, replace(svc, samples=tuple(new),
                                         responders=tuple(resp) if any(resp) else svc.responders))
    return _with(state, wid, replace(svc, plan=event, plan_samples=svc.samples, plan_responders=svc.responders))


def _by_name(names: list[str], per_stage: tuple[tuple[float, ...], ...], event: kw.ServiceStagesDeclared
             ) -> tuple[tuple[float, ...], ...]:
    """`per_stage` (in the order of `names`) re-indexed by `event`'s stages; () when it held none."""
    if not per_stage:
        return ()
    old = dict(zip(names, per_stage, strict=True))
    return tuple(old.get(s.name, ()) for s in event.stages)


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample KS statistic sup |F_a − F_b|."""
    xa, xb = np.sort(a), np.sort(b)
    grid = np.concatenate([xa, xb])
    fa = np.searchsorted(xa, grid, side="right") / xa.size
    fb = np.searchsorted(xb, grid, side="right") / xb.size
    return float(np.max(np.abs(fa - fb)))


def ks_critical(alpha: float) -> float:
    """The asymptotic two-sample KS coefficient `c(α) = sqrt(−ln(α / 2) / 2)` (c(0.01) ≈ 1.628)."""
    return float(np.sqrt(-np.log(alpha / 2.0) / 2.0))


def drifted(current: tuple[float, ...], used: tuple[float, ...], alpha: float = ALPHA) -> bool:
    """Whether the KS test at level `alpha` rejects one distribution for `current` and `used`."""
    n, m = len(current), len(used)
    if n == 0 or m == 0:
        return False
    d = ks_statistic(np.asarray(current), np.asarray(used))
    return d > ks_critical(alpha) * float(np.sqrt((n + m) / (n * m)))


def ready(svc: ServiceKwiken) -> bool:
    return all(len(x) >= MIN_SAMPLES for x in svc.samples)


def due(svc: ServiceKwiken) -> tuple[bool, tuple[str, ...]]:
    """Whether a plan is due (enough samples and no plan, or drift), and the drifted stages."""
    if not ready(svc):
        return False, ()
    if svc.plan is None or len(svc.plan_samples) != len(svc.samples):
        return True, ()
    names = tuple(s.name for s in svc.declared.stages)
    per_stage = ALPHA / len(names)  # Bonferroni over the stages (module doc)
    moved = tuple(n for i, n in enumerate(names) if drifted(svc.basis(i), svc.basis(i, used=True), per_stage))
    return bool(moved), moved


def compute_plan(svc: ServiceKwiken, seed: int) -> tuple[tuple[kw.StagePlanEntry, ...], float]:
    """The per-stage plan of `svc` (module doc) and the reissue work it spends (Σ c_s r_s)."""
    d = svc.declared
    xs = [np.asarray(x, dtype=float) for x in svc.samples]
    costs = np.array([s.cost for s in d.stages], float)
    costs = costs / costs.sum()
    eligible = [not s.partial for s in d.stages]
    curves = [reissue_curve(x, seed=seed + i) for i, x in enumerate(xs)]
    alloc = sumvar(curves, costs, d.reissue_budget, gamma=GAMMA, eligible=eligible)
    out: list[kw.StagePlanEntry] = []
    for i, s in enumerate(d.stages):
        n = len(xs[i])
        if s.partial:
            rng = np.random.default_rng([seed, i, 7])
            basis = np.asarray(svc.basis(i), dtype=float)
            resp = Responders(rng.choice(basis, size=(PARTIAL_REQUESTS, s.fanout), replace=True))
            pol = kwiken_policy(resp, d.loss_budget)
            out.append(kw.StagePlanEntry(stage=s.name, policy="none", fraction=0.0, samples=len(basis),
                                         partial_t_c_ms=_finite(pol.t_c), partial_t_d_ms=_finite(pol.t_d),
                                         partial_p=round(float(pol.p), 9),
                                         partial_t_min_ms=_finite(pol.t_min) if pol.t_min > 0 else None))
            continue
        sp = plan_stage(xs[i], float(alloc.r[i]), curves[i])
        out.append(kw.StagePlanEntry(stage=s.name, policy=sp.policy, fraction=round(float(sp.fraction), 9),
                                     timeout_ms=_finite(sp.timeout), samples=n))
    return tuple(out), round(float(costs @ alloc.r), 9)


def _finite(v: float) -> float | None:
    return round(float(v), 6) if np.isfinite(v) else None

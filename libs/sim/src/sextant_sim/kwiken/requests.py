"""Request-level simulation of a DAG service under Kwiken's per-stage policies (vectorised).

A *period* is `m` requests of a service: per request and stage a latency (`families.draw_stage`),
two independent reissue draws and a uniform (for `immediate` reissues). Policies are applied per
request and stage in topological order; the end-to-end latency is the DAG's longest path
(`sextant_core.kwiken.dag.end_to_end`). Every stream is seeded by `(seed, service, period, stage)`,
so a period is the same whatever else is simulated.

Budget accounting in a period: the reissue work used is `Σ_s c_s · mean(reissues at s)` (normalised
costs); the utility loss of partial answers is the sum of the stages' loss rates (the sequential
bound, `sextant_core.kwiken.budget`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sextant_core.kwiken.curves import Curve
from sextant_core.kwiken.dag import end_to_end
from sextant_core.kwiken.partial import PartialPolicy, Responders
from sextant_core.kwiken.reissue import StagePlan, apply_plan

from .families import draw, draw_stage, in_period
from .library import Service


@dataclass(frozen=True)
class Period:
    """`lat` (m × N), `alt` (3 × m × N) reissue draws (two for local policies, one for global
    reissues), `u` (m × N) uniforms; `index` of the period."""

    service: Service
    index: int
    seed: int
    lat: np.ndarray
    alt: np.ndarray
    u: np.ndarray


def _rng(seed: int, service: Service, period: int, stage: int, purpose: int) -> np.random.Generator:
    key = [int(b) for b in service.name.encode()]
    return np.random.default_rng([seed, *key, period, stage, purpose])


def period(service: Service, seed: int, index: int, m: int) -> Period:
    """`m` requests of `service` in period `index` (0 = training, 1 = test by convention)."""
    n = service.dag.n
    lat = np.empty((m, n))
    alt = np.empty((3, m, n))
    u = np.empty((m, n))
    for s, fam in enumerate(service.families):
        f = in_period(fam, _rng(seed, service, index, s, 0))
        rng = _rng(seed, service, index, s, 1)
        lat[:, s] = draw_stage(f, m, rng)
        alt[0, :, s] = draw_stage(f, m, rng)
        alt[1, :, s] = draw_stage(f, m, rng)
        alt[2, :, s] = draw_stage(f, m, rng)
        u[:, s] = rng.random(m)
    return Period(service, index, seed, lat, alt, u)


def responders(service: Service, seed: int, index: int, stage: int, m: int) -> np.ndarray:
    """Per-responder latencies (m × responders) of a fan-out stage in period `index`."""
    fam = service.families[stage]
    f = in_period(fam, _rng(seed, service, index, stage, 0))
    return draw(f, (m, fam.responders), _rng(seed, service, index, stage, 2))


@dataclass(frozen=True)
class Outcome:
    """End-to-end latencies (ms) of a period's requests, the reissue work used and the utility loss."""

    e2e: np.ndarray
    reissue_used: float
    loss: float
    stage_latency: np.ndarray  # (m × N) after the policies

    def p(self, q: float) -> float:
        return float(np.percentile(self.e2e, q))


def partial_stop(resp: Responders, pol: PartialPolicy) -> tuple[np.ndarray, float]:
    """A fan-out stage's latency per request under `pol` (its stop time) and its loss rate."""
    stop = resp.stop(pol)
    return stop, resp.loss(stop)


def run(per: Period, plans: Sequence[StagePlan], partial: dict[int, tuple[np.ndarray, float]] | None = None
        ) -> Outcome:
    """Apply `plans[s]` to every stage and, for the stages of `partial`, replace the stage latency
    by the given stop times (`partial_stop` on a responder matrix whose rows are this period's
    requests), adding their loss rates."""
    c = per.service.dag.normalised_costs()
    lat = per.lat.copy()
    used = 0.0
    loss = 0.0
    for s, plan in enumerate(plans):
        if plan.policy != "none":
            y, re = apply_plan(per.lat[:, s], per.alt[:2, :, s], per.u[:, s], plan)
            lat[:, s] = y
            used += float(c[s] * re.mean())
    for s, (stop, stage_loss) in (partial or {}).items():
        lat[:, s] = stop
        loss += stage_loss
    return Outcome(end_to_end(per.service.dag, lat), used, loss, lat)


def p99_cut(base: Outcome, new: Outcome, q: float = 99.0) -> float:
    """Relative reduction of the `q`-th percentile: `1 − p_q(new) / p_q(base)`."""
    return 1.0 - new.p(q) / base.p(q)


def p99_many(per: Period, fractions: np.ndarray, curves: Sequence[Curve], train: np.ndarray, rows: int,
             q: float = 99.0, batch: int = 250) -> np.ndarray:
    """The `q`-th percentile of end-to-end latency of the first `rows` requests of `per` under each
    of many allocations (`fractions`: K × N), every stage planned like `plan_stage` (policy of the
    curve's nearest grid point, timeouts from the training samples `train`, m × N). Vectorised
    over allocations; used by the best-of-random-allocations baseline."""
    dag = per.service.dag
    k_all, n = fractions.shape
    lat = per.lat[:rows]
    xs_all = np.sort(train, axis=0)
    out = np.empty(k_all)
    for b0 in range(0, k_all, batch):
        fr = fractions[b0:b0 + batch]
        finish = np.zeros((n, fr.shape[0], rows))
        for s in dag.order:
            x = lat[:, s][None, :]
            a0, a1, u = per.alt[0, :rows, s][None, :], per.alt[1, :rows, s][None, :], per.u[:rows, s][None, :]
            r = fr[:, s]
            names = np.array([c if c != "none" else "timeout" for c in
                              (curves[s].policy[int(np.argmin(np.abs(curves[s].r - v)))] for v in r)])
            half = np.where(names == "two-after-timeout", r / 2.0, r)
            xs = xs_all[:, s]
            kk = np.floor(half * xs.size + 1e-9).astype(int)
            t = np.where(kk >= xs.size, 0.0, xs[np.clip(xs.size - kk - 1, 0, xs.size - 1)])[:, None]
            second = np.where((names == "two-after-timeout")[:, None], np.minimum(a0, a1), a0)
            y = np.where(x > t, np.minimum(x, t + second), x)
            y = np.where((names == "immediate")[:, None], np.where(u < r[:, None], np.minimum(x, a0), x), y)
            y = np.where((r > 0)[:, None], y, x)
            ps = dag.preds[s]
            start = finish[list(ps)].max(axis=0) if ps else 0.0
            finish[s] = start + y
        out[b0:b0 + batch] = np.percentile(finish[dag.sinks()].max(axis=0), q, axis=1)
    return out

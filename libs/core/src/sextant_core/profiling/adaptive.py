"""Uncertainty-driven profiling: buy the entries whose prior uncertainty matters most (beyond the
papers, docs/quality/profiling.md). Pure: the same workload, seed and state give the same plan.

`AdaptiveProfilingPlan` keeps the default plan's scale-up runs (the reference run first) and
scale-out runs, and replaces its *random* heterogeneity platforms and interference sources by a
greedy, variance-reducing choice of up to `max_runs` runs in total:

* **prior** — the leading dense rows of the workload's kind's matrices (the offline seed rows,
  Paragon §2.2), read as a Gaussian prior for a new row: heterogeneity as ``ln(perf_p) − ln(perf_high)``
  (the high-end entry comes from the reference run, so the platform *ratio* is what is unknown),
  interference as the 20 normalised scores ``t:<source>``, ``c:<source>`` (a ramp of one source
  measures both);
* **what matters for placement** — the weighted posterior variance ``U = Σ_k w_k Var(k | measured)``:
  a platform weighs its share of the cluster's schedulable cores (where the workload can go),
  every interference column weighs 1;
* **greedy choice** — add the run (a platform or a source) that removes the largest *fraction* of
  its matrix's prior `U` (a platform's fraction times `platform_weight`), ties broken by
  (classification, column); stop at `max_runs` runs or when the best run removes less than
  `min_gain` of its matrix's prior `U`. At least the papers' `floor_platforms` platform and
  `floor_sources` sources are always taken (by the same order).

**Coverage** (`platform_choice = "coverage"`, sextant 9's plan, beyond the variance greedy): the
planner places on a platform whose level was measured (`planning.assess.unmeasured_levels`), and one
platform known to meet the target is enough — it need not know the whole row. So the platforms are
chosen first, for the chance that one of them is *good* for the workload: in each prior row a
platform is good when its level is within `good_within` (5 %, the QoS margin) of that row's best;
greedily the platform that makes the most prior rows have a good measured platform (the high-end
one counts as measured), ties broken by its share of the cores times the share of rows where it is
good, then by id; it stops when `coverage` of the rows have one, or at `max_platforms`. The
remaining budget goes to the variance greedy over the interference sources (the source floor
first).

Without enough dense rows (`min_rows`) for a matrix the plan falls back to the default plan's
random choice for that matrix. Each run lasts `duration_s`. Budget: ``len(plan) <= max_runs``
whenever the kept runs, the fallback runs and the floors fit in it (2–3 + 0–3 + 3 ≤ 10 with the
defaults). The choice is remembered per plan object, keyed by the digests of the prior rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sextant_contracts.events import ProfileRun
from sextant_contracts.ids import derive_id
from sextant_contracts.model import INTERFERENCE_SOURCES, Classification

from ..classification.knowledge import Matrix
from ..classification.observations import CAUSED_PREFIX, TOLERATED_PREFIX, group_of
from ..state.model import ClusterState, WorkloadState
from .plan import DefaultProfilingPlan

if TYPE_CHECKING:
    from ..context import DecisionContext

HET, ITF = Classification.HETEROGENEITY, Classification.INTERFERENCE
SCAN_ROWS = 512  # at most this many leading dense rows (the seed rows) make a prior
MEMO_SIZE = 4096  # choices remembered per plan, keyed by the priors' content


@dataclass(frozen=True, slots=True)
class Candidate:
    """One run the greedy may add: the matrix columns it measures, by index into its prior."""

    classification: Classification
    column: str  # a platform id or an interference source
    block: tuple[int, ...]


Prior = tuple[np.ndarray, np.ndarray, list[Candidate]]  # covariance, weights per column, candidates


def dense_prefix(m: Matrix, columns: Sequence[str]) -> tuple[np.ndarray, str]:
    """The leading rows of `m` (at most `SCAN_ROWS`) that measured every one of `columns` — the
    offline seed rows come first — as (values (n, len(columns)) normalised, digest of those n
    rows). The scan stops at the first row that lacks a column; n = 0 if a column is unknown."""
    idx = [m.index.get(c) for c in columns]
    rows: list[list[float]] = []
    if all(i is not None for i in idx):
        for row in m.rows.head(min(len(m.rows), SCAN_ROWS)):
            pos = dict(zip(row.cols, row.values, strict=True))
            if not all(i in pos for i in idx):
                break
            rows.append([pos[i] for i in idx])  # type: ignore[index]
    return np.asarray(rows, dtype=float).reshape(len(rows), len(columns)), m.rows.digest_at(len(rows))


def _stops_at(m: Matrix, columns: Sequence[str], n: int) -> bool:
    """Whether `dense_prefix` of `m` stops after its first `n` rows, given those are unchanged."""
    if n >= min(len(m.rows), SCAN_ROWS):
        return True
    idx = [m.index.get(c) for c in columns]
    return any(i is None or i not in m.rows[n].cols for i in idx)


def weighted_variance(cov: np.ndarray, weights: np.ndarray, measured: Sequence[int], nugget: float) -> float:
    """``Σ_k w_k Var(k | measured)`` of a Gaussian with covariance `cov`, the measured columns seen
    with noise variance `nugget` (Schur complement)."""
    if not measured:
        return float(weights @ np.diag(cov))
    m = list(measured)
    s_om = cov[:, m]
    k = cov[np.ix_(m, m)] + nugget * np.eye(len(m))
    post = np.diag(cov) - np.einsum("ij,ji->i", s_om, np.linalg.solve(k, s_om.T))
    return float(weights @ np.maximum(post, 0.0))


class AdaptiveProfilingPlan:
    """The default plan's scale-up and scale-out runs plus heterogeneity and interference runs chosen
    by prior uncertainty (module docstring). `max_runs` bounds the whole plan."""

    def __init__(self, max_runs: int = 10, min_gain: float = 0.05, *, floor_platforms: int = 1,
                 floor_sources: int = 2, min_rows: int = 8, platform_weight: float = 1.0,
                 duration_s: float = 30.0, platform_choice: str = "variance", coverage: float = 0.97,
                 good_within: float = 0.05, max_platforms: int = 8) -> None:
        if max_runs < 1 or not 0.0 <= min_gain < 1.0:
            raise ValueError("max_runs must be >= 1 and 0 <= min_gain < 1")
        if platform_choice not in ("variance", "coverage") or not 0.0 < coverage <= 1.0 or good_within < 0:
            raise ValueError("platform_choice 'variance' or 'coverage', 0 < coverage <= 1, good_within >= 0")
        self.platform_choice = platform_choice
        self.coverage = coverage
        self.good_within = good_within
        self.max_platforms = max_platforms
        self.max_runs = max_runs
        self.min_gain = min_gain
        self.floor_platforms = floor_platforms
        self.floor_sources = floor_sources
        self.min_rows = min_rows
        self.platform_weight = platform_weight
        self.duration_s = duration_s
        self.base = DefaultProfilingPlan(duration_s=duration_s)
        self._het_rows = np.zeros((0, 0))  # the last heterogeneity prior's rows (`covering`'s input)
        # (kind, high, platforms, cores, budget, prior digests) -> choice: a pure function of the
        # key (the digests pin the prior rows), so remembering it never changes a plan
        self._memo: dict[tuple[object, ...], list[tuple[Classification, str]]] = {}
        # (matrix key, columns) -> (n, digest, rows) of its last `dense_prefix`, revalidated by the
        # digest of the n rows and the row after them (`_stops_at`): the same rows as a fresh scan
        self._prefix: dict[tuple[str, tuple[str, ...]], tuple[int, str, np.ndarray]] = {}
        # (matrix key, columns, digest of the prior rows) -> their covariance (`_cov`)
        self._covs: dict[tuple[str, ...], np.ndarray] = {}

    def plan(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> tuple[ProfileRun, ...]:
        base = self.base.plan(state, w, ctx)
        if not base:
            return ()
        kept = [r for r in base if r.classification not in (HET, ITF)]
        ref = kept[0]
        servers = [s for s in state.sorted_servers() if s.schedulable]
        first: dict[str, str] = {}
        cores: dict[str, int] = {}
        for s in servers:
            first.setdefault(s.platform, s.server_id)
            cores[s.platform] = cores.get(s.platform, 0) + s.capacity.cores
        width = {s.platform: s.capacity.cores for s in servers}
        others = sorted(p for p in first if p != ref.platform and width[p] >= ref.cores)
        priors, digests = self.priors(state, w.kind.value, ref.platform, others, cores)
        # a matrix without a prior keeps the default plan's random runs (inside the budget)
        fallback = [r for r in base if r.classification in (HET, ITF) and r.classification not in priors]
        budget = self.max_runs - len(kept) - len(fallback)
        key = (w.kind.value, ref.platform, tuple(others), tuple(cores[p] for p in others), budget, digests)
        chosen = self._memo.get(key)
        if chosen is None:
            if self.platform_choice == "coverage" and HET in priors:
                chosen = [(HET, p) for p in covering(self._het_rows, [cores[p] for p in others], others,
                                                     self.coverage, self.good_within,
                                                     min(self.max_platforms, budget - self.floor_sources))]
                rest = {c: v for c, v in priors.items() if c is not HET}
                chosen += greedy(rest, budget - len(chosen), self.min_gain, {ITF: self.floor_sources})
            else:
                chosen = greedy(priors, budget, self.min_gain, {HET: self.floor_platforms, ITF: self.floor_sources},
                                {HET: self.platform_weight})
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = chosen
        extra: list[ProfileRun] = []
        for cls, column in chosen:
            platform = column if cls is HET else ref.platform
            extra.append(ProfileRun(run_id="-", classification=cls, column=column, platform=platform,
                                    server_id=first[platform], cores=ref.cores, nodes=1, duration_s=self.duration_s))
        runs = kept + extra + fallback
        return tuple(r.model_copy(update={"run_id": derive_id(w.workload_id, "run", i, ctx.seed)})
                     for i, r in enumerate(runs))

    def priors(self, state: ClusterState, kind: str, high: str, platforms: list[str],
               cores: dict[str, int]) -> tuple[dict[Classification, Prior], tuple[str, ...]]:
        """The (covariance, weights, candidates) prior of each matrix of `kind` that has one:
        heterogeneity over `platforms` (relative to `high`; `cores` their schedulable cores),
        interference over every source; and the digests of the rows they come from."""
        priors: dict[Classification, Prior] = {}
        digests: list[str] = []
        het = state.knowledge.matrix(HET, group_of(HET, kind))
        if het is not None and platforms:
            got = self.dense(het, [high, *platforms])
            if got is not None:
                y, digest = got
                digests.append(f"het:{digest}")
                d = y[:, 1:] - y[:, :1]  # ln(perf_p / perf_high)
                self._het_rows = d
                wts = np.array([cores[p] for p in platforms], dtype=float)
                cov = self._cov((het.key, high, *platforms, digest), lambda: np.atleast_2d(np.cov(d, rowvar=False)))
                priors[HET] = (cov, wts / wts.sum(),
                               [Candidate(HET, p, (i,)) for i, p in enumerate(platforms)])
        itf = state.knowledge.matrix(ITF, group_of(ITF, kind))
        sources = [s.value for s in INTERFERENCE_SOURCES]
        if itf is not None:
            got = self.dense(itf, [TOLERATED_PREFIX + s for s in sources] + [CAUSED_PREFIX + s for s in sources])
            if got is not None:
                y, digest = got
                digests.append(f"itf:{digest}")
                n = len(sources)
                cov = self._cov((itf.key, *sources, digest), lambda: np.cov(y, rowvar=False))
                priors[ITF] = (cov, np.ones(2 * n),
                               [Candidate(ITF, s, (i, n + i)) for i, s in enumerate(sources)])
        return priors, tuple(digests)

    def _cov(self, key: tuple[str, ...], compute: Callable[[], np.ndarray]) -> np.ndarray:
        """The prior covariance of the rows `key` names (matrix, columns, digest of the rows):
        computed once (read-only), the same array each time."""
        hit = self._covs.get(key)
        if hit is None:
            if len(self._covs) >= MEMO_SIZE:
                self._covs.clear()
            hit = self._covs[key] = compute()
            hit.setflags(write=False)
        return hit

    def dense(self, m: Matrix, columns: list[str]) -> tuple[np.ndarray, str] | None:
        """`dense_prefix(m, columns)` (remembered), or None with fewer than `min_rows` rows."""
        key = (m.key, tuple(columns))
        hit = self._prefix.get(key)
        if hit is not None and hit[0] <= len(m.rows) and m.rows.digest_at(hit[0]) == hit[1] \
                and _stops_at(m, columns, hit[0]):
            y, digest = hit[2], hit[1]
        else:
            y, digest = dense_prefix(m, columns)
            if len(self._prefix) >= MEMO_SIZE:
                self._prefix.clear()
            self._prefix[key] = (len(y), digest, y)
        return (y, digest) if len(y) >= self.min_rows else None


def greedy(priors: dict[Classification, Prior], budget: int, min_gain: float, floors: dict[Classification, int],
           scale: dict[Classification, float] | None = None) -> list[tuple[Classification, str]]:
    """Greedy variance reduction over the candidates of every prior (module docstring); a run's
    gain is multiplied by its matrix's `scale` (default 1)."""
    scale = scale or {}
    measured: dict[Classification, list[int]] = {c: [] for c in priors}
    left: dict[Classification, list[Candidate]] = {c: list(p[2]) for c, p in priors.items()}
    prior_u: dict[Classification, float] = {}
    nugget: dict[Classification, float] = {}
    for c, (cov, wts, _) in priors.items():
        nugget[c] = 1e-3 * float(np.mean(np.diag(cov))) + 1e-12
        prior_u[c] = weighted_variance(cov, wts, [], nugget[c])
    chosen: list[tuple[Classification, str]] = []
    taken = {c: 0 for c in priors}
    while True:
        best: tuple[float, str, str, Candidate] | None = None
        for c, (cov, wts, _) in priors.items():
            now = weighted_variance(cov, wts, measured[c], nugget[c])
            for cand in left[c]:
                after = weighted_variance(cov, wts, measured[c] + list(cand.block), nugget[c])
                gain = scale.get(c, 1.0) * (now - after) / prior_u[c] if prior_u[c] > 0 else 0.0
                if taken[c] < floors.get(c, 0):
                    gain += 1.0  # a floor run first
                key = (-gain, c.value, cand.column, cand)
                if best is None or key[:3] < best[:3]:
                    best = key
        if best is None:
            return chosen
        gain, cand = -best[0], best[3]
        below_floor = taken[cand.classification] < floors.get(cand.classification, 0)
        if not below_floor and (len(chosen) >= budget or gain < min_gain):
            return chosen
        chosen.append((cand.classification, cand.column))
        taken[cand.classification] += 1
        measured[cand.classification] += list(cand.block)
        left[cand.classification].remove(cand)


def covering(rows: np.ndarray, cores: Sequence[float], platforms: Sequence[str], coverage: float,
             good_within: float, most: int) -> list[str]:
    """The platforms to measure so that `coverage` of the prior rows have a *good* measured one
    (module docstring, "Coverage"). `rows`: (n, P) of ``ln(perf_p / perf_high)`` per prior row for
    `platforms` (the high end is column 0 of no one: it is measured, at 0); `cores` their
    schedulable cores. At most `most` platforms, in the order chosen."""
    if len(rows) == 0 or most <= 0:
        return []
    full = np.concatenate([np.zeros((len(rows), 1)), rows], axis=1)  # the high end first, at 0
    good = full >= full.max(axis=1, keepdims=True) + math.log1p(-good_within) - 1e-12
    covered = good[:, 0].copy()
    share = np.asarray(cores, dtype=float) / max(float(np.sum(cores)), 1e-12)
    value = share * good[:, 1:].mean(axis=0)  # the tie-break: cores where it tends to be good
    chosen: list[int] = []
    while len(chosen) < most and covered.mean() < coverage - 1e-12:
        gains = [(-(good[:, 1 + j] & ~covered).sum(), -value[j], platforms[j], j)
                 for j in range(len(platforms)) if j not in chosen]
        if not gains or gains and min(gains)[0] == 0:
            break
        j = min(gains)[3]
        chosen.append(j)
        covered |= good[:, 1 + j]
    return [platforms[j] for j in chosen]

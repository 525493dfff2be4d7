"""Reference rows: the information yardstick of the decision-quality acceptance (docs/quality/information.md).

A `Classifier` that returns, for every workload, the rows the reference estimator
(`refestimator`: the twin's own prior over workloads + the profiler's noise model, a Monte-Carlo
posterior) infers from **exactly the entries the workload's profiling plan measured** — the
best any classifier can do with those entries on this world. Fed to `sextant`'s planner
(`baselines.REFERENCE_ROWS`) it answers: what QoS is reachable from the entries Sextant's plan
buys? It is a yardstick, never a policy: it reads the twin's generator and profiler
(`SANCTIONED_TRUTH_READ`), and only the baselines' wiring and benchmarks import it
(`tests/architecture/test_no_peeking.py`).

Method (choices marked [choice]):

* **prior** — `draws` workloads of the workload's kind from the scenario's own generative
  process: each draw picks (group, family) with probability ∝ the group's submissions × the
  family's share of its mix, restricted to the kind (the submission's kind is in the log), and is
  generated with the group's `DrawOptions` on the stream ``reference-rows`` (fresh seeds, never
  the workloads under test). The submission's name (which carries the family) and its request are
  not used: the reference sees the measured entries only.
* **likelihood** — [choice] *joint*: every measured entry of the workload (scale-up, scale-out,
  heterogeneity runs and interference ramps, tolerated and caused) multiplies into one
  likelihood (`ReferenceEstimator.loglik`). This is the stronger floor: the reference of
  `bench/classification.py` weights each classification on its own two entries only
  (`joint=False` does that here: one posterior per classification).
* **rows** — [choice] in the engine's units and columns (`units="engine"`, the default; what
  `sextant` on the classification engine reads, `Rows.engine`): raw run values — heterogeneity
  per platform at the reference configuration, scale-up on the high-end platform, scale-out per
  node count, the scores of a ramp on the high-end platform. `units="port"`: the estimate port's
  relative units (per-core speed relative to the fastest platform, `Rows.port`), as the true rows
  of `sextant-true-rows`; measured on paragon-ec2-2500 seed 1 the two gave the same QoS (0.304 /
  0.292, docs/quality/information.md).
* **point estimate** — [choice] the posterior *median* of each cell (`point="median"`; "mean":
  the posterior mean): the planner compares a level with a target, and the median is as likely
  to be above the truth as below it.
* **measured cells** — [choice] in the engine's units every performance cell the plan measured
  is returned as measured (`classification.observations.cells`, duplicates' geometric mean): the
  profiler's noise (1.5 %) is finer than the Monte-Carlo posterior resolves. In the port's units
  the measured platforms keep their measured *ratios* (`_pin`). Scores are always posterior
  medians (Table III noise is several points: the posterior is the better estimate) unless
  `scores="measured"` (`sextant-reference-dense`: with every entry measured the joint posterior
  rests on one prior draw, and its scores are worse than the measured ones).
* **confidence** — [choice] 1.0 for every classification (`confidence="one"`), as the port and
  the true rows report it: the planner takes the rows as they are; `"posterior"`: the posterior
  probability that a hidden cell is within ±10 % (±10 points) of its estimate, the engine's
  definition (`classification.foldin.confidence`), which widens the planner's margin.

Diagnostics (`stats`, `summary`): per classified workload its kind, its entries, the posterior's
ESS, and the mean error of the rows against the truth (heterogeneity on the platforms not
measured, relative %, in the rows' units; interference in points over all 20 scores) — read from
the truth only *after* the rows are made, for the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sextant_contracts.events import ModelRetrained
from sextant_contracts.model import Classification
from sextant_core.classification.observations import TOLERATED_PREFIX, cells
from sextant_core.policies import Classified, RetrainingClassifier
from sextant_core.state.model import ClusterState, WorkloadState

from .arrivals import in_cluster, rng_for
from .estimates import SCALE_OUT_COLUMNS
from .groundtruth import SOURCES
from .refestimator import Observation, Posterior, ReferenceEstimator, entries, posterior
from .setup import Setup
from .workloads.base import WorkloadTruth
from .workloads.generate import DrawOptions, generate
from .workloads.performance import concept_matrix

if TYPE_CHECKING:
    from sextant_core.decide import DecisionContext

SANCTIONED_TRUTH_READ = "reference-rows"
VERSION = "1"
POINTS = ("median", "mean")
CONFIDENCES = ("one", "posterior")
UNITS = ("engine", "port")
SCORES = ("posterior", "measured")
TOLERANCE = {"heterogeneity": 0.10, "scale_up": 0.10, "scale_out": 0.10, "tolerated": 10.0, "caused": 10.0}
UP_CORES = (1, 2, 4, 8, 16, 32, 64)


def prior_draws(setup: Setup, kind: str, draws: int, stream: str = "reference-rows") -> list[WorkloadTruth]:
    """`draws` workloads of `kind` from the scenario's generative process (module docstring)."""
    sc, gt = setup.scenario, setup.gt
    subs = {g.name: 0 for g in sc.groups}
    for s in setup.subs:
        subs[s.group] = subs.get(s.group, 0) + 1
    pairs: list[tuple[Any, str]] = []
    weights: list[float] = []
    for g in sc.groups:
        total = sum(g.mix.values())
        for fam in sorted(g.mix):
            if gt.families[fam].kind == kind and g.mix[fam] > 0:
                pairs.append((g, fam))
                weights.append(max(subs.get(g.name, 0), 1) * g.mix[fam] / total)
    if not pairs:
        raise ValueError(f"the scenario has no family of kind {kind!r}")
    p = np.array(weights) / sum(weights)
    picks = rng_for(setup.seed, stream, kind, "pick").choice(len(pairs), size=draws, p=p)
    concepts = concept_matrix(setup.cat, gt)
    out = []
    for j, k in enumerate(picks):
        g, fam = pairs[int(k)]
        opts = DrawOptions(reservations=g.reservations, phases=g.phases, load_trace=g.load_trace,
                           trace_segment_s=g.trace_segment_s, duration_scale=g.duration_scale,
                           lifetime_s=g.lifetime_s, stragglers=g.stragglers)
        out.append(in_cluster(generate(f"{stream}:{fam}:{j}", fam, rng_for(setup.seed, stream, fam, j),
                                       setup.cat, concepts, gt, opts), setup.cat))
    return out


@dataclass(frozen=True, slots=True)
class Rows:
    """The port-unit rows of every prior draw, one (draws, columns) array per field, each column
    pre-sorted (`order`) so a weighted median is one cumulative sum."""

    columns: dict[str, tuple[str, ...]]
    values: dict[str, np.ndarray]
    order: dict[str, np.ndarray]

    @classmethod
    def of(cls, values: dict[str, tuple[tuple[str, ...], np.ndarray]]) -> Rows:
        """From field -> (columns, (draws, columns) values)."""
        v = {f: np.asarray(a, dtype=float) for f, (_, a) in values.items()}
        return cls({f: c for f, (c, _) in values.items()}, v,
                   {f: np.argsort(a, axis=0, kind="stable") for f, a in v.items()})

    @classmethod
    def engine(cls, setup: Setup, est: ReferenceEstimator, kind: str, ref: int) -> Rows:
        """The engine's units and columns (`bench/classification.py`'s `TruthClassifier`): raw
        run values — heterogeneity per platform at the reference configuration (a batch or
        analytics job's per-core level on 1 core × the high-end platform's ref/1-core ratio, so
        a platform with fewer cores is not clipped; a service's at `ref` cores), scale-up on the
        high-end platform per `seeding.scale_up_cores`, scale-out at `ref` cores per node on
        `seeding.SCALE_OUT_NODES`, the scores of a ramp on the high-end platform."""
        from .seeding import SCALE_OUT_NODES, scale_up_cores

        cat = setup.cat
        high = cat.reference()
        if kind == "service":
            het = np.stack([est.performance(p.platform_id, ref, 1) for p in cat.platforms], axis=1)
        else:
            one = est.performance(high.platform_id, 1, 1)
            level = np.where(one > 0, est.performance(high.platform_id, ref, 1) / np.where(one > 0, one, 1.0), 1.0)
            het = np.stack([est.performance(p.platform_id, 1, 1) * level for p in cat.platforms], axis=1)
        ups = scale_up_cores(high.cores)
        vals: dict[str, tuple[tuple[str, ...], np.ndarray]] = {
            "heterogeneity": (tuple(p.platform_id for p in cat.platforms), het),
            "scale_up": (tuple(f"c{c}" for c in ups),
                         np.stack([est.performance(high.platform_id, c, 1) for c in ups], axis=1))}
        if kind != "batch":
            vals["scale_out"] = (tuple(f"n{n}" for n in SCALE_OUT_NODES),
                                 np.stack([est.performance(high.platform_id, ref, n) for n in SCALE_OUT_NODES], axis=1))
        tol, cau = est.scores(high.platform_id)
        vals["tolerated"], vals["caused"] = (SOURCES, tol), (SOURCES, cau)
        return cls.of(vals)

    @classmethod
    def port(cls, setup: Setup, prior: Sequence[WorkloadTruth]) -> Rows:
        cat, prof = setup.cat, setup.profiler
        ref = cat.index(cat.reference().platform_id)
        ups = [c for c in UP_CORES if c <= cat.platforms[ref].cores]
        cols: dict[str, tuple[str, ...]] = {
            "heterogeneity": tuple(p.platform_id for p in cat.platforms), "scale_up": tuple(f"c{c}" for c in ups),
            "scale_out": tuple(f"n{k}" for k in SCALE_OUT_COLUMNS), "tolerated": SOURCES, "caused": SOURCES}
        het = np.array([t.speed for t in prior], dtype=float)
        up = np.array([[t.scale_up(c) / t.scale_up(t.threads) for c in ups] for t in prior])
        out = np.array([[k * (t.analytics.efficiency(k) if t.analytics is not None else
                              t.service.node_efficiency(k) if t.service is not None else 1.0)
                         for k in SCALE_OUT_COLUMNS] for t in prior])
        pairs = [prof.interference(t, ref) for t in prior]
        values = {"heterogeneity": het, "scale_up": up, "scale_out": out,
                  "tolerated": np.array([p[0] for p in pairs], dtype=float),
                  "caused": np.array([p[1] for p in pairs], dtype=float)}
        return cls(cols, values, {k: np.argsort(v, axis=0, kind="stable") for k, v in values.items()})

    def within(self, field: str, post: Posterior, est: np.ndarray, tol: float) -> np.ndarray:
        """Per column: the posterior probability that the truth is within `tol` of `est`
        (relative for performance fields, in points for scores) — the engine's confidence
        (`classification.foldin.confidence`: P(|true − estimate| ≤ tolerance)) for these rows."""
        v = self.values[field]
        rel = field not in ("tolerated", "caused")
        err = np.abs(v / np.where(est > 0, est, 1.0) - 1.0) if rel else np.abs(v - est)
        return np.asarray(post.weights @ (err <= tol))

    def point(self, field: str, post: Posterior, how: str) -> np.ndarray:
        """Per column of `field`: the posterior median (the smallest value whose cumulative
        weight reaches half, as `refestimator.weighted_median`) or mean."""
        v = self.values[field]
        if how == "mean":
            return np.asarray(post.weights @ v)
        o = self.order[field]
        cum = np.cumsum(post.weights[o], axis=0)
        k = np.argmax(cum >= 0.5 * cum[-1], axis=0)
        cols = np.arange(v.shape[1])
        return np.asarray(v[o[k, cols], cols])


def _pin(vals: np.ndarray, columns: Sequence[str], measured: dict[str, float]) -> np.ndarray:
    """The per-core speeds with the measured platforms' *ratios* as measured: measured platform p
    gets s · m_p, the scale s fitted to the posterior estimates of those platforms (geometric
    mean of est_p / m_p); the other platforms keep their posterior estimate."""
    idx = [i for i, c in enumerate(columns) if c in measured and vals[i] > 0]
    if not idx:
        return vals
    m = np.array([measured[columns[i]] for i in idx])
    scale = float(np.exp(np.mean(np.log(vals[idx]) - np.log(m))))
    out = vals.copy()
    out[idx] = scale * m
    return out


def _scores(out: dict[str, dict[str, float]], vals: list[tuple[str, float]]) -> None:
    """The measured scores (``t:<source>`` / ``c:<source>`` cells, duplicates averaged) into
    `out["tolerated"]` / `out["caused"]` by source."""
    by: dict[str, list[float]] = {}
    for col, v in vals:
        by.setdefault(col, []).append(v)
    for col, vs in by.items():
        field = "tolerated" if col.startswith(TOLERATED_PREFIX) else "caused"
        out.setdefault(field, {})[col.split(":", 1)[1]] = float(np.mean(vs))


def _reference_cores(obs: list[Observation]) -> int:
    """The plan's reference configuration (`planning.model.reference_cores`): the cores of its
    heterogeneity runs, else of its first scale-up run (the reference run), else 1."""
    for cls in (Classification.HETEROGENEITY, Classification.SCALE_UP):
        for r, _, _ in obs:
            if r.classification is cls:
                return r.cores
    return 1


def observations(state: ClusterState, w: WorkloadState) -> list[Observation]:
    """The workload's measured entries since its last classification: (run, value, caused)."""
    p = state.knowledge.pending.get(w.workload_id)
    if p is None:
        return []
    runs = {r.run_id: r for r in p.runs}
    return [(runs[rid], float(v), c) for rid, _cls, _col, v, c in p.samples if rid in runs]


class ReferenceRowsClassifier(RetrainingClassifier):
    """`Classifier`: the reference estimator's posterior rows from the measured entries.

    It declares the `RetrainingClassifier` capability (and never retrains) so that the twin seeds
    the run's knowledge base with the offline campaign (`seeding.events_for`) exactly as for the
    engine: `sextant`'s adaptive plan reads its prior from those seed rows, and without them falls
    back to the papers' 5-run plan."""

    SANCTIONED_TRUTH_READ: ClassVar[str] = "reference-rows"

    def __init__(self, setup: Setup, draws: int = 4000, *, point: str = "median", joint: bool = True,
                 units: str = "engine", pin: bool = True, confidence: str = "one", scores: str = "posterior",
                 stream: str = "reference-rows") -> None:
        if point not in POINTS or confidence not in CONFIDENCES or units not in UNITS:
            raise ValueError(f"point: one of {POINTS}; confidence: {CONFIDENCES}; units: {UNITS}")
        self.setup, self.draws, self.point, self.joint, self.stream = setup, draws, point, joint, stream
        if scores not in SCORES:
            raise ValueError(f"scores: one of {SCORES}")
        self.units, self.pin, self.confidence, self.scores = units, pin, confidence, scores
        self._est: dict[str, ReferenceEstimator] = {}
        self._rows: dict[str, Rows] = {}
        self._engine_rows: dict[tuple[str, int], Rows] = {}
        self.stats: list[dict[str, Any]] = []

    def prior(self, kind: str) -> tuple[ReferenceEstimator, Rows]:
        """The prior sample of `kind` (drawn on first use) and its port-unit rows."""
        if kind not in self._est:
            draws = prior_draws(self.setup, kind, self.draws, self.stream)
            self._est[kind] = ReferenceEstimator(self.setup, (kind,), self.draws, prior=draws)
            self._rows[kind] = Rows.port(self.setup, draws)
        return self._est[kind], self._rows[kind]

    def rows(self, kind: str, obs: list[Observation]) -> tuple[Classified, dict[str, float]]:
        """The rows of a workload of `kind` with measured entries `obs`, and each posterior's ESS."""
        est, port = self.prior(kind)
        rows = port if self.units == "port" else self.engine_rows(kind, _reference_cores(obs))
        if self.joint:
            post = posterior(est.loglik(obs))
            by = dict.fromkeys(("scale_up", "scale_out", "heterogeneity", "interference"), post)
        else:
            by = {c: posterior(est.loglik(o)) for c, o in entries(obs).items()}
        fields = {"heterogeneity": by["heterogeneity"], "scale_up": by["scale_up"], "scale_out": by["scale_out"],
                  "tolerated": by["interference"], "caused": by["interference"]}
        measured = self._measured(kind, obs)
        out: dict[str, dict[str, float]] = {}
        conf: dict[str, list[float]] = {}
        for f, p in fields.items():
            if f == "scale_out" and kind == "batch":
                out[f] = {}
                continue
            vals = rows.point(f, p, self.point)
            known = measured.get(f, {})
            if self.units == "port":
                vals = _pin(vals, rows.columns[f], known) if known else vals
            else:
                vals = np.array([known.get(c, v) for c, v in zip(rows.columns[f], vals, strict=True)])
            out[f] = {c: round(float(v), 6) for c, v in zip(rows.columns[f], vals, strict=True)}
            if self.confidence == "posterior":
                hidden = [i for i, c in enumerate(rows.columns[f]) if c not in known]
                conf.setdefault("interference" if f in ("tolerated", "caused") else f, []).extend(
                    rows.within(f, p, vals, TOLERANCE[f])[hidden].tolist())
        confidence = {c: round(float(np.mean(conf[c])), 6) if conf.get(c) else 1.0 for c in
                      ("scale_up", "scale_out", "heterogeneity", "interference")} \
            if self.confidence == "posterior" else dict.fromkeys(("scale_up", "scale_out", "heterogeneity",
                                                                   "interference"), 1.0)
        classified = Classified(**out, confidence=confidence, model_versions={"reference-rows": self.version})
        return classified, {c: p.ess for c, p in by.items()}

    def engine_rows(self, kind: str, ref: int) -> Rows:
        """The prior's rows of `kind` in the engine's units at reference cores `ref` (cached)."""
        key = (kind, ref)
        if key not in self._engine_rows:
            self._engine_rows[key] = Rows.engine(self.setup, self.prior(kind)[0], kind, ref)
        return self._engine_rows[key]

    def _measured(self, kind: str, obs: list[Observation]) -> dict[str, dict[str, float]]:
        """Field -> column -> the measured value the rows keep: in the engine's units every
        performance cell the plan measured (`classification.observations.cells`: the reference run
        also fills its platform's heterogeneity cell and `n1`; duplicates: geometric mean; a
        measured 0 is left to the posterior); in the port's units the heterogeneity cells whose
        ratios are speed ratios (`_pinned`). Scores are kept (their mean) only with
        `scores="measured"`: their Table III noise is several points, and the posterior median is
        the better estimate when the Monte-Carlo posterior resolves it (not when dozens of precise
        performance entries leave one prior draw: ESS 1 with every entry measured)."""
        if self.units == "port":
            pinned = self._pinned(kind, obs) if self.pin else {}
            return {"heterogeneity": pinned} if pinned else {}
        samples = [(r.run_id, r.classification.value, r.column, v, c) for r, v, c in obs]
        out: dict[str, dict[str, float]] = {}
        for (cls, _group), vals in cells(kind, [r for r, _, _ in obs], samples).items():
            if cls is Classification.INTERFERENCE:
                if self.scores == "measured":
                    _scores(out, vals)
                continue
            by: dict[str, list[float]] = {}
            for col, v in vals:
                by.setdefault(col, []).append(v)
            out[cls.value] = {col: vs[0] if len(vs) == 1 else float(np.exp(np.mean(np.log(vs))))
                              for col, vs in by.items() if min(vs) > 0}
        return out

    @property
    def version(self) -> str:
        return (f"{VERSION}/{self.point}/{'joint' if self.joint else 'split'}/{self.draws}"
                f"/{self.units}{'+pin' if self.units == 'port' and self.pin else ''}/{self.confidence}"
                f"{'/measured-scores' if self.scores == 'measured' else ''}")

    def _pinned(self, kind: str, obs: list[Observation]) -> dict[str, float]:
        """Platform -> its measured level (geometric mean of its runs), for the runs whose ratio
        is the ratio of per-core speeds: single-node runs at the reference run's cores on platforms
        with at least those cores, of a batch or analytics workload (a service's QPS within its
        latency bound is not proportional to speed). Empty without pinning."""
        if kind == "service":
            return {}
        perf = [(r, v) for r, v, _ in obs if r.classification in (Classification.SCALE_UP, Classification.HETEROGENEITY)]
        if not perf:
            return {}
        cores = perf[0][0].cores
        cat = self.setup.cat
        logs: dict[str, list[float]] = {}
        for r, v in perf:
            if r.nodes == 1 and r.cores == cores and v > 0 and cat.platforms[cat.index(r.platform)].cores >= cores:
                logs.setdefault(r.platform, []).append(float(np.log(v)))
        return {p: float(np.exp(np.mean(v))) for p, v in logs.items()} if len(logs) >= 1 else {}

    def retrains(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> tuple[ModelRetrained, ...]:
        """No model to retrain (the prior is the twin's generator)."""
        return ()

    def classify(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> Classified:
        obs = observations(state, w)
        out, ess = self.rows(w.kind.value, obs)
        self._record(w.workload_id, w.kind.value, obs, out, ess)
        return out

    def _record(self, wid: str, kind: str, obs: list[Observation], c: Classified, ess: dict[str, float]) -> None:
        """Diagnostics for the report (the rows are already made): errors against the truth."""
        t = self.setup.truths.get(wid)
        if t is None:
            return
        cat = self.setup.cat
        ref = cat.index(cat.reference().platform_id)
        seen = {r.platform for r, _, _ in obs if r.classification in (Classification.HETEROGENEITY,
                                                                       Classification.SCALE_UP)}
        if self.units == "port":
            true = np.asarray(t.speed, dtype=float)
        else:  # the truth in the engine's units: the same rows of a one-draw prior holding `t`
            one = ReferenceEstimator(self.setup, (kind,), 1, prior=[t])
            true = Rows.engine(self.setup, one, kind, _reference_cores(obs)).values["heterogeneity"][0]
        het = [abs(c.heterogeneity[p.platform_id] / float(true[i]) - 1.0) * 100
               for i, p in enumerate(cat.platforms) if p.platform_id not in seen and true[i] > 0]
        tol, cau = self.setup.profiler.interference(t, ref)
        itf = [abs(c.tolerated[s] - float(tol[k])) for k, s in enumerate(SOURCES)]
        itf += [abs(c.caused[s] - float(cau[k])) for k, s in enumerate(SOURCES)]
        self.stats.append({"kind": kind, "entries": len(obs), "ess": min(ess.values()),
                           "het_err": float(np.mean(het)) if het else None, "itf_err": float(np.mean(itf))})

    def summary(self) -> dict[str, Any]:
        """Per kind: workloads, median ESS, share of ESS < 10, mean entries, mean errors."""
        out: dict[str, Any] = {}
        for kind in sorted({s["kind"] for s in self.stats}):
            rs = [s for s in self.stats if s["kind"] == kind]
            het = [s["het_err"] for s in rs if s["het_err"] is not None]
            out[kind] = {"workloads": len(rs), "entries": float(np.mean([s["entries"] for s in rs])),
                         "ess_median": float(np.median([s["ess"] for s in rs])),
                         "ess_below_10": float(np.mean([s["ess"] < 10 for s in rs])),
                         "heterogeneity_error_pct": float(np.mean(het)) if het else None,
                         "interference_error_points": float(np.mean([s["itf_err"] for s in rs]))}
        return out
